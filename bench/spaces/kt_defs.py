"""The benchmark spaces in Kernel Tuner's terms (tune_params, restrictions), one per
bench/spaces/NAME/kernel.yaml (tunefarm's terms, written from the same published
definitions). Used by bench/spaces/kt_space.py; a benchmark only, never a test."""

B = 1024          # max threads per block (every space below)
SHARED = 49152    # shared memory per block, bytes
SHARED_SM = 102400  # shared memory per multiprocessor (A4000, as the hotspot space has it)


def sgemm(m=4096, n=4096, k=4096):
    """kernels/sgemm (shipped), problem s4096, on the nominal sm_90 device."""
    tp = dict(MWG=[16, 32, 64, 128, 256], NWG=[16, 32, 64, 128, 256], KWG=[16, 32, 64],
              MDIMC=[8, 16, 32], NDIMC=[8, 16, 32], MDIMA=[8, 16, 32], NDIMB=[8, 16, 32],
              KWI=[1, 2, 4, 8], VWM=[1, 2, 4], VWN=[1, 2, 4], STRM=[0, 1], STRN=[0, 1],
              SA=[0, 1], SB=[0, 1], PAD=[0, 1])
    r = [f"{m} % MWG == 0 and {n} % NWG == 0 and {k} % KWG == 0",
         "KWG % KWI == 0",
         f"MDIMC * NDIMC <= {B}",
         "MWG % (MDIMC * VWM) == 0",
         "NWG % (NDIMC * VWN) == 0",
         "SA == 1 or MDIMA == 8",
         "SB == 1 or NDIMB == 8",
         "SA == 0 or (MWG % (MDIMA * VWM) == 0 and KWG % ((MDIMC * NDIMC) // MDIMA) == 0)",
         "SB == 0 or (NWG % (NDIMB * VWN) == 0 and KWG % ((MDIMC * NDIMC) // NDIMB) == 0)",
         "PAD == 0 or SA == 1 or SB == 1",
         f"(SA * KWG * (MWG + PAD * VWM) + SB * KWG * (NWG + PAD * VWN)) * 4 <= {SHARED}",
         "(MWG // MDIMC) * (NWG // NDIMC) <= 128",
         "MDIMC * NDIMC * ((MWG // MDIMC) * (NWG // NDIMC) + MWG // MDIMC + NWG // NDIMC + 16)"
         " <= 65536"]
    return tp, r


def hotspot():
    """Rodinia hotspot with temporal tiling: the space of Kernel Tuner's search-space
    construction benchmark (benchmark_kernels/hotspot), 22.2 M configurations."""
    tp = dict(grid_width=[4096], grid_height=[4096],
              block_size_x=[1, 2, 4, 8, 16] + [32 * i for i in range(1, 33)],
              block_size_y=[2 ** i for i in range(6)],
              tile_size_x=list(range(1, 11)), tile_size_y=list(range(1, 11)),
              temporal_tiling_factor=list(range(1, 11)), max_tfactor=[10],
              loop_unroll_factor_t=list(range(1, 11)), sh_power=[0, 1],
              blocks_per_sm=[0, 1, 2, 3, 4])
    smem = ("(block_size_x*tile_size_x + temporal_tiling_factor * 2) * "
            "(block_size_y*tile_size_y + temporal_tiling_factor * 2) * (2+sh_power) * 4")
    r = ["block_size_x*block_size_y >= 32",
         "temporal_tiling_factor % loop_unroll_factor_t == 0",
         f"block_size_x*block_size_y <= {B}",
         f"{smem} <= {SHARED}",
         f"blocks_per_sm == 0 or (({smem}) * blocks_per_sm <= {SHARED_SM})"]
    return tp, r


def expdist():
    """ExpDist (benchmark_kernels/expdist), 9.7 M configurations. Kernel Tuner adds
    block_size_x * block_size_y <= max_threads itself (block_size_* names)."""
    tp = dict(block_size_x=[2 ** i for i in range(5, 11)][::-1],
              block_size_y=[2 ** i for i in range(6)],
              tile_size_x=list(range(1, 9)), tile_size_y=list(range(1, 9)),
              use_shared_mem=[0, 1, 2],
              loop_unroll_factor_x=list(range(1, 9)), loop_unroll_factor_y=list(range(1, 9)),
              use_column=[0, 1], use_separate_acc=[0],
              n_y_blocks=[2 ** i for i in range(11)])
    r = ["use_column != 0 or n_y_blocks <= 1",
         "use_column != 0 or use_shared_mem != 2",
         "loop_unroll_factor_x <= tile_size_x and (tile_size_x % loop_unroll_factor_x == 0)",
         "loop_unroll_factor_y <= tile_size_y and (tile_size_y % loop_unroll_factor_y == 0)"]
    return tp, r


def dedispersion():
    """Dedispersion (benchmark_hub dedispersion_milo), with the channel unroll factor
    over 0 and the divisors of 1536 channels as the original tuning script has it:
    0.47 M configurations."""
    channels = 1536
    tp = dict(block_size_x=[1, 2, 4, 8, 16, 32],
              block_size_y=[8 * i for i in range(4, 33)], block_size_z=[1],
              tile_size_x=[1, 2, 3, 4], tile_size_y=list(range(1, 9)),
              tile_stride_x=[0, 1], tile_stride_y=[0, 1],
              loop_unroll_factor_channel=[0] + [i for i in range(1, channels + 1)
                                                if channels % i == 0])
    r = [f"32 <= block_size_x * block_size_y <= {B}",
         "tile_size_x > 1 or tile_stride_x == 0",
         "tile_size_y > 1 or tile_stride_y == 0"]
    return tp, r


def microhh():
    """MicroHH advec_u (Kernel Tuner's search-space benchmark, extra tuning), 1.2 M."""
    tp = dict(BLOCK_SIZE_X=[1, 2, 4, 8, 16, 32, 128, 256, 512, 1024],
              BLOCK_SIZE_Y=[1, 2, 4, 8, 16, 32], BLOCK_SIZE_Z=[1, 2, 4],
              STATIC_STRIDES=[0], TILING_FACTOR_X=[1, 2, 4, 8], TILING_FACTOR_Y=[1, 2, 4],
              TILING_FACTOR_Z=[1, 2, 4], TILING_STRATEGY=[0], REWRITE_INTERP=[0],
              BLOCKS_PER_MP=[0, 1, 2, 3, 4], LOOP_UNROLL_FACTOR_X=[1, 2, 4, 8],
              LOOP_UNROLL_FACTOR_Y=[1, 2, 4], LOOP_UNROLL_FACTOR_Z=[1, 2, 4])
    r = ["BLOCK_SIZE_X * BLOCK_SIZE_Y * BLOCK_SIZE_Z * BLOCKS_PER_MP <= 1024",
         "32 <= BLOCK_SIZE_X * BLOCK_SIZE_Y * BLOCK_SIZE_Z <= 1536",
         "LOOP_UNROLL_FACTOR_X == 0 or TILING_FACTOR_X % LOOP_UNROLL_FACTOR_X == 0",
         "LOOP_UNROLL_FACTOR_Y == 0 or TILING_FACTOR_Y % LOOP_UNROLL_FACTOR_Y == 0",
         "LOOP_UNROLL_FACTOR_Z == 0 or TILING_FACTOR_Z % LOOP_UNROLL_FACTOR_Z == 0",
         "BLOCK_SIZE_X * TILING_FACTOR_X > 0",
         "BLOCK_SIZE_Y * TILING_FACTOR_Y > 0",
         "BLOCK_SIZE_Z * TILING_FACTOR_Z > 0"]
    return tp, r


def gemm_clblast():
    """CLBlast's Xgemm (benchmark_hub gemm_milo's parameters and restrictions) with
    the value lists widened as CLBlast's own tuner sweeps them, its second kernel
    (GEMMK = 1, 2-D register tiling with KREG) and half, single and double
    precision (PRECISION): 187 M configurations."""
    tp = dict(GEMMK=[0, 1], MWG=[16, 32, 64, 128, 256], NWG=[16, 32, 64, 128, 256],
              KWG=[16, 32, 64], MDIMC=[8, 16, 32], NDIMC=[8, 16, 32], MDIMA=[8, 16, 32],
              NDIMB=[8, 16, 32], KWI=[1, 2, 4, 8], VWM=[1, 2, 4, 8], VWN=[1, 2, 4, 8],
              STRM=[0, 1], STRN=[0, 1], SA=[0, 1], SB=[0, 1], KREG=[1, 2, 4, 8, 16],
              PRECISION=[16, 32, 64])
    r = ["KWG % KWI == 0",
         "MWG % (MDIMC * VWM) == 0",
         "NWG % (NDIMC * VWN) == 0",
         "MWG % (MDIMA * VWM) == 0",
         "NWG % (NDIMB * VWN) == 0",
         "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
         "KWG % ((MDIMC * NDIMC) // NDIMB) == 0",
         "not (MWG == 128 and NWG == 128 and MDIMC == 8 and NDIMC == 8)",
         f"MDIMC * NDIMC <= {B}",
         f"(SA * KWG * MWG + SB * KWG * NWG) * (PRECISION // 8) <= {SHARED}",
         "GEMMK == 0 or (SA == 0 and SB == 0 and MDIMA == MDIMC and NDIMB == NDIMC)",
         "GEMMK == 1 or KREG == 1",
         "KWG % (KWI * KREG) == 0"]
    return tp, r


def convolution_t1():
    """The T1 file /work/shared/datasets/benchmark_hub/convolution_milo (10^4: small)."""
    tp = dict(block_size_x=[16 * i for i in range(1, 17)], block_size_y=[1, 2, 4, 8, 16],
              tile_size_x=[1, 2, 3, 4], tile_size_y=[1, 2, 3, 4], read_only=[0, 1],
              use_padding=[0, 1], use_shmem=[0, 1], use_cmem=[1], filter_height=[15],
              filter_width=[15])
    r = ["use_padding==0 or block_size_x % 32 != 0",
         "block_size_x*block_size_y<=1024",
         "use_padding==0 or use_shmem != 0",
         "use_shmem == 0 or (((block_size_x*tile_size_x+(filter_width-1)))*"
         "((block_size_y*tile_size_y+(filter_height-1)))) < 12*1024"]
    return tp, r


SPACES = {  # name: (definition, tunefarm kernel file, problem)
    "sgemm": (sgemm, "kernels/sgemm/kernel.yaml", "s4096"),
    "hotspot": (hotspot, "bench/spaces/hotspot/kernel.yaml", "g4096"),
    "expdist": (expdist, "bench/spaces/expdist/kernel.yaml", "p"),
    "dedispersion": (dedispersion, "bench/spaces/dedispersion/kernel.yaml", "p"),
    "microhh": (microhh, "bench/spaces/microhh/kernel.yaml", "p"),
    "gemm_clblast": (gemm_clblast, "bench/spaces/gemm_clblast/kernel.yaml", "n4096"),
    "convolution_t1": (convolution_t1, "bench/spaces/convolution_t1/kernel.yaml", "p"),
}
