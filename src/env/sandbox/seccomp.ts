/**
 * The seccomp program bubblewrap installs in every sandbox: it refuses the kernel keyring's
 * system calls (`add_key`, `request_key`, `keyctl`) with EPERM and allows everything else.
 *
 * Why: keyrings are not confined by mount, pid or network namespaces. A sandboxed process
 * shares its session keyring with the process that started bubblewrap, and the user keyring
 * with every process of the same user on the host. A key added inside outlives the sandbox, so
 * one run could leave data for a later run (a with-skill run for a without-skill one, an answer
 * for the next answer) and read keys the host keeps there. Container engines refuse the same
 * three calls in their default profiles; this brings bubblewrap to the same line.
 *
 * The program is classic BPF over `struct seccomp_data` (nr at offset 0, arch at offset 4),
 * built per host architecture with each compatibility ABI the kernel accepts (i386 and x32 on
 * x86-64, 32-bit ARM on arm64), since a 32-bit binary calls the same keyring by other numbers.
 */
import { endianness } from "node:os";

const LOAD_WORD = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_IF_EQUAL = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RETURN = 0x06; // BPF_RET | BPF_K
const ALLOW = 0x7fff_0000; // SECCOMP_RET_ALLOW
const REFUSE_EPERM = 0x0005_0000 | 1; // SECCOMP_RET_ERRNO | EPERM
const NUMBER_OFFSET = 0;
const ARCH_OFFSET = 4;

/** Per audit architecture: the numbers of add_key, request_key and keyctl. */
const keyringCalls: Readonly<Record<string, ReadonlyArray<readonly [number, readonly number[]]>>> =
  {
    x64: [
      // AUDIT_ARCH_X86_64, then the same calls through the x32 ABI (bit 30 set).
      [0xc000_003e, [248, 249, 250, 0x4000_00f8, 0x4000_00f9, 0x4000_00fa]],
      [0x4000_0003, [286, 287, 288]], // AUDIT_ARCH_I386
    ],
    arm64: [
      [0xc000_00b7, [217, 218, 219]], // AUDIT_ARCH_AARCH64
      [0x4000_0028, [309, 310, 311]], // AUDIT_ARCH_ARM
    ],
  };

interface Instruction {
  readonly code: number;
  readonly value: number;
  /** Where a taken comparison goes: a label resolved to a forward offset. */
  readonly ifEqual?: string;
}

/**
 * The program for `arch` (Node's `process.arch` names), or undefined on an architecture whose
 * numbers are not listed here (the sandbox then runs without the filter: see the README).
 */
export function keyringSeccompProgram(arch: string = process.arch): Buffer | undefined {
  const table = keyringCalls[arch];
  if (table === undefined) return undefined;
  const program: Instruction[] = [{ code: LOAD_WORD, value: ARCH_OFFSET }];
  table.forEach(([audit], index) => {
    program.push({ code: JUMP_IF_EQUAL, value: audit, ifEqual: `arch${index}` });
  });
  // An architecture not in the table cannot run on this host; allowed like any other call.
  program.push({ code: RETURN, value: ALLOW });
  const labels = new Map<string, number>();
  table.forEach(([, numbers], index) => {
    labels.set(`arch${index}`, program.length);
    program.push({ code: LOAD_WORD, value: NUMBER_OFFSET });
    for (const number of numbers)
      program.push({ code: JUMP_IF_EQUAL, value: number, ifEqual: "refuse" });
    program.push({ code: RETURN, value: ALLOW });
  });
  labels.set("refuse", program.length);
  program.push({ code: RETURN, value: REFUSE_EPERM });
  return encode(program, labels);
}

function encode(program: readonly Instruction[], labels: ReadonlyMap<string, number>): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  const little = endianness() === "LE";
  program.forEach((instruction, at) => {
    const target = instruction.ifEqual === undefined ? undefined : labels.get(instruction.ifEqual);
    // A jump counts from the next instruction, forward only, in one byte.
    const jumpIfTrue = target === undefined ? 0 : target - at - 1;
    if (jumpIfTrue < 0 || jumpIfTrue > 255) throw new RangeError("seccomp jump out of reach");
    const offset = at * 8;
    if (little) bytes.writeUInt16LE(instruction.code, offset);
    else bytes.writeUInt16BE(instruction.code, offset);
    bytes.writeUInt8(jumpIfTrue, offset + 2);
    bytes.writeUInt8(0, offset + 3);
    if (little) bytes.writeUInt32LE(instruction.value >>> 0, offset + 4);
    else bytes.writeUInt32BE(instruction.value >>> 0, offset + 4);
  });
  return bytes;
}
