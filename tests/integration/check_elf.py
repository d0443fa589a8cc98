#!/usr/bin/env python3
"""check_elf.py CACHE_DIR BACKEND ARCH N - the compile cache holds N real code objects
of BACKEND for ARCH: ELF files for the right machine (EM_CUDA 190 with the SM number in
e_flags for cuda; EM_AMDGPU 224 with the gfx target's mach number in e_flags for hip)."""
import glob
import struct
import sys

AMDGPU_MACH = {"gfx90a": 0x3F, "gfx942": 0x4C, "gfx908": 0x30, "gfx1030": 0x36}


def main():
    cache, backend, arch, want = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    ext = "cubin" if backend == "cuda" else "hsaco"
    files = glob.glob("%s/tunefarm/%s/*/*.%s" % (cache, backend, ext))
    good = 0
    for path in files:
        data = open(path, "rb").read()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            raise SystemExit("%s: not a 64-bit ELF file" % path)
        machine = struct.unpack_from("<H", data, 18)[0]
        flags = struct.unpack_from("<I", data, 48)[0]
        if backend == "cuda":
            # CUDA >= 13 cubins (EI_ABIVERSION >= 8) carry the SM in bits 8..15
            sm = (flags >> 8) & 0xFF if data[8] >= 8 else flags & 0xFF
            ok = machine == 190 and sm == int(arch[3:])
        else:
            ok = machine == 224 and (flags & 0xFF) == AMDGPU_MACH[arch]
        if not ok:
            raise SystemExit("%s: machine %d, e_flags 0x%x: not %s code for %s"
                             % (path, machine, flags, backend, arch))
        good += 1
    if good != want:
        raise SystemExit("%d %s code objects for %s, expected %d" % (good, backend, arch, want))
    print("%d %s code objects for %s: ELF, machine and target checked" % (good, backend, arch))


if __name__ == "__main__":
    main()
