#!/usr/bin/env python3
"""Write predictions.jsonl from recorded/<skill>/<requirement>/<arm>/: every file there is what
the recorded agent created in that run, turned into a unified diff against the repository (the
recorded files are all new files). Run by make-bundle.sh; rerun after editing recorded/."""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDED = os.path.join(HERE, "recorded")
REPO = os.path.join(HERE, "repo")


def new_file_diff(relative_path: str, text: str) -> str:
    if os.path.exists(os.path.join(REPO, relative_path)):
        raise SystemExit(f"{relative_path} exists in the repository; only new files are supported")
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{relative_path} b/{relative_path}\n"
        "new file mode 100644\n"
        "--- /dev/null\n"
        f"+++ b/{relative_path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n"
        f"{body}"
    )


def main() -> None:
    records = []
    for skill in sorted(os.listdir(RECORDED)):
        for requirement in sorted(os.listdir(os.path.join(RECORDED, skill))):
            for arm in ("without", "with"):
                root = os.path.join(RECORDED, skill, requirement, arm)
                patches = []
                for folder, _, files in sorted(os.walk(root)):
                    for name in sorted(files):
                        path = os.path.join(folder, name)
                        relative_path = os.path.relpath(path, root).replace(os.sep, "/")
                        with open(path, encoding="utf-8") as handle:
                            patches.append(new_file_diff(relative_path, handle.read()))
                records.append(
                    {"skill": skill, "requirement": requirement, "arm": arm, "patch": "".join(patches)}
                )
    with open(os.path.join(HERE, "predictions.jsonl"), "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")
    print(f"wrote {len(records)} predictions")


if __name__ == "__main__":
    main()
