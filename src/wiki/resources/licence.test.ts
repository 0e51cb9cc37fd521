import { describe, expect, it } from "vitest";
import { recogniseLicence, recogniseLicenceFiles } from "./licence.js";

const BSD_2 = `Copyright (c) Donald Stufft and individual contributors.
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

    1. Redistributions of source code must retain the above copyright notice,
       this list of conditions and the following disclaimer.`;
const APACHE =
  "                                 Apache License\n                           Version 2.0, January 2004\n";
const DISPATCH =
  "This software is made available under the terms of *either* of the licenses\nfound in LICENSE.APACHE or LICENSE.BSD. Contributions to this software is made\nunder the terms of *both* these licenses.\n";

describe("licence recognition", () => {
  it("reads a BSD text that says 'All rights reserved' as BSD, not as proprietary", () => {
    expect(recogniseLicence(BSD_2)).toEqual({ licence: "BSD-2-Clause", flag: "permissive" });
    expect(recogniseLicence("Copyright 2024 Example Corp. All rights reserved.")).toEqual({
      licence: "proprietary",
      flag: "restrictive",
    });
  });

  it("reads a dual licence from a LICENSE that names its licence files (pypa/packaging's layout)", () => {
    expect(
      recogniseLicenceFiles({ name: "LICENSE", text: DISPATCH }, [
        { name: "LICENSE.APACHE", text: APACHE },
        { name: "LICENSE.BSD", text: BSD_2 },
      ]),
    ).toEqual({ licence: "Apache-2.0 OR BSD-2-Clause", flag: "permissive" });
  });

  it("stays unknown when the primary file does not name the others, and takes AND without a primary", () => {
    expect(
      recogniseLicenceFiles({ name: "LICENSE", text: "See the files." }, [
        { name: "LICENSE.APACHE", text: APACHE },
      ]),
    ).toEqual({ licence: null, flag: "unknown" });
    expect(
      recogniseLicenceFiles(undefined, [
        { name: "LICENSE-APACHE", text: APACHE },
        { name: "LICENSE-NC", text: "Attribution-NonCommercial 4.0 International" },
      ]),
    ).toEqual({ licence: "Apache-2.0 AND CC-BY-NC-4.0", flag: "restrictive" });
    expect(
      recogniseLicenceFiles({ name: "LICENSE", text: "MIT License\n" }, [
        { name: "LICENSE.third-party", text: "whatever" },
      ]),
    ).toEqual({ licence: "MIT", flag: "permissive" });
  });
});
