/* gpus.c — owns the built-in GPU spec table (const data, a source per entry),
 * precision names, device-name matching patterns and the JSON form of a spec.
 *
 * Every number is a dense figure (no 2:4 structured sparsity). Datasheets
 * print the sparse tensor figure and mark it with '*'; those are halved here,
 * exactly (1,979 → 989.5), and the source string says so. A figure that no
 * cited document publishes is NaN (null in JSON) and the entry's notes say
 * why; a figure derived from published numbers says "derived" in the notes.
 * docs/roofline.md lists the same sources in a table. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/json_set.h"
#include "rpxprof/error.h"
#include "common/json.h"
#include "rpxprof/roofline.h"

#define NA NAN

/* Peaks in the order of rpx_precision, {tensor, vector} each. */
#define PEAKS(f64t, f64v, f32t, f32v, tf32t, f16t, f16v, bf16t, bf16v, f8t, i8t)                \
    {                                                                                          \
        {(f64t), (f64v)}, {(f32t), (f32v)}, {(tf32t), NA}, {(f16t), (f16v)}, {(bf16t), (bf16v)}, \
            {(f8t), NA}, {(i8t), NA}                                                           \
    }

#define SPARSE_HALVED "tensor figures printed with 2:4 sparsity ('*') are halved here"

static const rpx_gpu_spec builtin[] = {
    /* ---- NVIDIA Hopper / Blackwell ---- */
    {"h200-sxm", "NVIDIA H200 SXM", "NVIDIA", "Hopper", 141, 4800,
     PEAKS(67, 34, NA, 67, 494.5, 989.5, NA, 989.5, NA, 1979, 1979), -1, NA, NA, 700,
     "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com, Nov 2024), H200 SXM column; "
     SPARSE_HALVED,
     "SM count, boost clock, L2 and non-tensor FP16/BF16 are not in the H200 datasheet "
     "(the die is the H100's GH100). No FP8/INT8 non-tensor path.",
     "h200 !nvl"},
    {"h100-sxm", "NVIDIA H100 SXM", "NVIDIA", "Hopper", 80, 3350,
     PEAKS(67, 34, NA, 67, 494.5, 989.5, 133.8, 989.5, 133.8, 1979, 1979), 132, NA, 50, 700,
     "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com, 2023), H100 SXM column; "
     SPARSE_HALVED "; SM count, L2 and non-tensor FP16/BF16 from NVIDIA H100 Tensor Core GPU "
     "Architecture whitepaper (WP-10792-001, 2022), H100 SXM5 column",
     "Boost clock: the whitepaper lists it as not finalised; the datasheet omits it.",
     "h100 hbm3 !nvl !pcie|h100 sxm|h100 sxm5"},
    {"h100-pcie", "NVIDIA H100 PCIe", "NVIDIA", "Hopper", 80, 2000,
     PEAKS(51, 26, NA, 51, 378, 756.5, 102.4, 756.5, 102.4, 1513, 1513), 114, NA, 50, 350,
     "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com, 2022), H100 PCIe column, and NVIDIA "
     "H100 PCIe GPU product brief (PB-11133-001_v02, Nov 2022) for the 350 W TDP; "
     SPARSE_HALVED "; SM count, L2 and non-tensor FP16/BF16 from NVIDIA H100 Tensor Core GPU "
     "Architecture whitepaper (WP-10792-001, 2022), H100 PCIe column",
     "TDP is 300-350 W (configurable); 350 W is the maximum. Boost clock not finalised in "
     "the whitepaper.",
     "h100 pcie"},
    {"h100-nvl", "NVIDIA H100 NVL", "NVIDIA", "Hopper", 94, 3900,
     PEAKS(60, 30, NA, 60, 417.5, 835.5, NA, 835.5, NA, 1670.5, 1670.5), -1, NA, NA, 400,
     "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com, 2024), H100 NVL column (per GPU); "
     SPARSE_HALVED "; 94 GB HBM3 and 3.9 TB/s (3.93 TB/s) checked against the grokipedia.com "
     "H100 NVL (900-21010-0120-030) page (2025)",
     "TDP 350-400 W (configurable); 400 W is the maximum. SM count, clocks, L2 and "
     "non-tensor FP16/BF16 not published for the NVL. FP16/BF16 tensor 835.5 is the "
     "datasheet's 1,671* halved, consistent with its TF32 835* and FP8 3,341*.",
     "h100 nvl"},
    {"b200", "NVIDIA B200 (HGX)", "NVIDIA", "Blackwell", 180, 7700,
     PEAKS(37, 37, NA, 75, 1100, 2250, NA, 2250, NA, 4500, 4500), -1, NA, NA, 1000,
     "NVIDIA DGX B200 / HGX B200 specifications (nvidia.com, 2025), individual Blackwell GPU "
     "column of HGX B200; " SPARSE_HALVED,
     "FP4 (9 PFLOPS dense) is not a precision of this table. Earlier NVIDIA pages printed "
     "40 TF FP64, 80 TF FP32, 192 GB and 8 TB/s for B200; the 2025 HGX figures are used. "
     "SM count, clocks and L2 not published.",
     "b200"},
    /* ---- NVIDIA Ampere data center ---- */
    {"a100-sxm-80gb", "NVIDIA A100 SXM 80GB", "NVIDIA", "Ampere", 80, 2039,
     PEAKS(19.5, 9.7, NA, 19.5, 156, 312, 78, 312, 39, NA, 624), 108, 1410, 40, 400,
     "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web, "
     "Jun 2021), A100 80GB SXM column (dense figures; sparse ones are the '*' column); SM "
     "count, boost clock, L2 and non-tensor FP16/BF16 from NVIDIA A100 Tensor Core GPU "
     "Architecture whitepaper (V1.0, 2020)",
     "No FP8: Ampere tensor cores have no FP8 mode (the datasheet lists FP64, TF32, BF16, "
     "FP16, INT8 and INT4).",
     "a100 sxm4 80gb|a100 sxm 80gb"},
    {"a100-sxm-40gb", "NVIDIA A100 SXM 40GB", "NVIDIA", "Ampere", 40, 1555,
     PEAKS(19.5, 9.7, NA, 19.5, 156, 312, 78, 312, 39, NA, 624), 108, 1410, 40, 400,
     "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web, "
     "Jun 2021), A100 40GB SXM column; SM count, boost clock, L2 and non-tensor FP16/BF16 "
     "from NVIDIA A100 Tensor Core GPU Architecture whitepaper (V1.0, 2020)",
     "No FP8: Ampere tensor cores have no FP8 mode.",
     "a100 sxm4 40gb|a100 sxm 40gb|a100 sxm4 !80gb"},
    {"a100-pcie-40gb", "NVIDIA A100 PCIe 40GB", "NVIDIA", "Ampere", 40, 1555,
     PEAKS(19.5, 9.7, NA, 19.5, 156, 312, 78, 312, 39, NA, 624), 108, 1410, 40, 250,
     "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web, "
     "Jun 2021), A100 40GB PCIe column; SM count, boost clock, L2 and non-tensor FP16/BF16 "
     "from NVIDIA A100 Tensor Core GPU Architecture whitepaper (V1.0, 2020)",
     "No FP8: Ampere tensor cores have no FP8 mode.",
     "a100 pcie 40gb|a100 pcie !80gb"},
    {"a100-pcie-80gb", "NVIDIA A100 PCIe 80GB", "NVIDIA", "Ampere", 80, 1935,
     PEAKS(19.5, 9.7, NA, 19.5, 156, 312, 78, 312, 39, NA, 624), 108, 1410, 40, 300,
     "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web, "
     "Jun 2021), A100 80GB PCIe column; SM count, boost clock, L2 and non-tensor FP16/BF16 "
     "from NVIDIA A100 Tensor Core GPU Architecture whitepaper (V1.0, 2020)",
     "No FP8: Ampere tensor cores have no FP8 mode.",
     "a100 pcie 80gb"},
    {"a30", "NVIDIA A30", "NVIDIA", "Ampere", 24, 933,
     PEAKS(NA, 5.2, NA, 10.3, NA, NA, NA, NA, NA, NA, NA), -1, NA, NA, 165,
     "sysrqmts.com A30 PCIe spec comparison (TechPowerUp-style data, part released Apr 2021): "
     "24 GB HBM2, 933.1 GB/s, FP32 10.32 TF, FP64 5.161 TF, 165 W; huggingface.co/hardware/a30 "
     "(24 GB, 10.32 TF, 165 W)",
     "No FP8 (Ampere). The tensor peaks (FP64, TF32, FP16, BF16, INT8) are null: the NVIDIA A30 "
     "datasheet was not found when the table was checked and no cited document publishes them "
     "(add them with --gpu-spec). SM count, clocks and L2 not taken.",
     "a30"},
    {"a10", "NVIDIA A10", "NVIDIA", "Ampere", 24, 600,
     PEAKS(NA, NA, NA, 31.2, NA, 125, NA, NA, NA, NA, NA), -1, NA, NA, 150,
     "baseten.co blog 'NVIDIA A10 vs A10G for ML model inference' (24 GB GDDR6, 600 GB/s); "
     "gist.github.com/kimbochen GPU table (A10: 125 TFLOP/s FP16, 0.6 TB/s, 24 GB, 150 W); "
     "sysrqmts.com A10 PCIe spec comparison (part released Apr 2021, FP32 31.24 TF, 150 W)",
     "No FP8 (Ampere). TF32, BF16 and INT8 tensor peaks are null: the NVIDIA A10 datasheet was "
     "not found when the table was checked and no cited document publishes them (add them with "
     "--gpu-spec). FP64 (a 1/64-rate path on GA102) is not listed; SM count, clocks and L2 not "
     "taken.",
     "a10"},
    /* ---- NVIDIA Ada data center ---- */
    {"l40s", "NVIDIA L40S", "NVIDIA", "Ada Lovelace", 48, 864,
     PEAKS(NA, NA, NA, 91.6, 183, 362.05, NA, 362.05, NA, 733, 733), 142, NA, NA, 350,
     "NVIDIA L40S GPU datasheet (nvidia.com, Aug 2023); dense figures (the '*' column is "
     "sparse)",
     "SM count derived: 18,176 CUDA cores / 128 per Ada SM (= its 142 RT cores). FP64 (a "
     "1/64-rate path on Ada) is not in the datasheet; nor are boost clock and L2.",
     "l40s"},
    {"l4", "NVIDIA L4", "NVIDIA", "Ada Lovelace", 24, 300,
     PEAKS(NA, NA, NA, 30.3, 60, 121, NA, 121, NA, 242.5, 242.5), -1, 2040, 48, 72,
     "NVIDIA L4 Tensor Core GPU datasheet (nvidia.com, Mar 2023); " SPARSE_HALVED
     " (TF32 120*, INT8 485* as reproduced on store.sourcecode.com; FP16 242*, FP8 485* per "
     "grokipedia.com 'NVIDIA L4 vs L40S', 2025); boost clock 2040 MHz from the same "
     "sourcecode.com listing ('795 MHz Base | 2040 MHz Boost'); L2 48 MB from fpsbench.com / "
     "cputronic.com L4 pages (2023 part)",
     "FP64 is not in the datasheet. SM count is null: public pages disagree (58 vs 60 SMs; "
     "7,424 vs 7,680 CUDA cores) and no NVIDIA document giving it was found when the table was "
     "checked.",
     "l4"},
    /* ---- NVIDIA Turing / Volta ---- */
    {"t4", "NVIDIA T4", "NVIDIA", "Turing", 16, 320,
     PEAKS(NA, NA, NA, 8.1, NA, 65, NA, NA, NA, NA, 130), 40, 1590, 4, 70,
     "NVIDIA T4 Tensor Core GPU datasheet (nvidia.com, 2019): 8.1 TF single precision, 65 TF "
     "mixed FP16/FP32, 130 TOPS INT8, 320+ GB/s; SM count, boost clock and L2 from NVIDIA "
     "Turing GPU Architecture whitepaper (WP-09183-001, 2018), Tesla T4 column",
     "Turing has no TF32, BF16 or FP8. FP64 and non-tensor FP16 are not in the datasheet.",
     "t4"},
    {"v100-sxm2", "NVIDIA V100 SXM2", "NVIDIA", "Volta", 32, 900,
     PEAKS(NA, 7.8, NA, 15.7, NA, 125, NA, NA, NA, NA, NA), 80, 1530, 6, 300,
     "NVIDIA developer blog 'Programming Tensor Cores in CUDA 9' (developer.nvidia.com, 2017): "
     "Tesla V100 up to 125 Tensor TFLOPS; NVIDIA GTC 2017 Tesla V100 table as reproduced by "
     "wccftech/techrival (May 2017): 80 SMs, 5120 FP32 and 2560 FP64 cores, 6144 KB L2; "
     "huggingface.co RajBhope/gpu-runtime-predictor gpu_catalog.json (V100: 32 GB, 900 GB/s, "
     "1530 MHz boost, 80 SMs, 15.7 TF FP32, 125 TF FP16, 6 MB L2, 300 W)",
     "Volta tensor cores run FP16 only: no TF32, BF16, FP8 or INT8 tensor path. A 16 GB "
     "variant has the same figures. FP64 derived: 2560 FP64 cores x 2 FLOP x 1.53 GHz = 7.83 "
     "(125 TF = 640 tensor cores x 128 FLOP x 1.53 GHz agrees with the 1530 MHz clock; the "
     "May 2017 pre-release table's 1455 MHz / 15 / 7.5 / 120 TF are superseded). Non-tensor "
     "FP16 is not listed.",
     "v100 sxm2"},
    /* ---- NVIDIA GeForce and workstation ---- */
    {"rtx-4090", "NVIDIA GeForce RTX 4090", "NVIDIA", "Ada Lovelace", 24, 1008,
     PEAKS(NA, NA, NA, 82.6, 82.6, 165.2, NA, 165.2, NA, 330.3, 660.6), 128, 2520, 72, 450,
     "NVIDIA Ada GPU Architecture whitepaper (V1.0, 2022), Appendix A, GeForce RTX 4090 "
     "column; dense figures (the whitepaper prints dense/sparse pairs)",
     "Tensor FP16/BF16/FP8 are the FP32-accumulate figures that frameworks use; with FP16 "
     "accumulate GeForce Ada doubles them (FP16 330.3, FP8 660.6). FP64 not listed.",
     "rtx 4090 !laptop !d"},
    {"rtx-4080", "NVIDIA GeForce RTX 4080", "NVIDIA", "Ada Lovelace", 16, 716.8,
     PEAKS(NA, NA, NA, 48.7, NA, 97.5, NA, 97.5, NA, 194.9, NA), 76, 2505, 64, 320,
     "Tom's Hardware 'Nvidia GeForce RTX 4080 Specifications' table as reproduced on "
     "holynerdvana.com (Nov 2022): 76 SMs, 2505 MHz boost, 64 MB L2, 48.7 TF FP32, FP16 "
     "(FP8) with sparsity 390 (780), 717 GB/s, 320 W; FP16/BF16 with FP32 accumulate 97.4 "
     "per ctc.archdevil.net GPU precision table (2024)",
     "Tensor FP16/BF16/FP8 are the FP32-accumulate figures (GeForce runs them at half the "
     "FP16-accumulate rate); with FP16 accumulate: FP16 194.9, FP8 389.9 (390 and 780 sparse, "
     "halved). FP8 derived: 780 / 2 / 2. TF32 and INT8 tensor are null: not published in a "
     "document found when the table was checked. FP64 not listed.",
     "rtx 4080 !super !laptop"},
    {"rtx-3090", "NVIDIA GeForce RTX 3090", "NVIDIA", "Ampere", 24, 936,
     PEAKS(NA, NA, NA, 35.6, NA, 71, NA, 71, NA, NA, NA), 82, 1695, 6, 350,
     "Tom's Hardware 'Nvidia GeForce RTX 3090 Specifications' table as reproduced on "
     "holynerdvana.blogspot.com (Nov 2022): 82 SMs, 1695 MHz boost, 6 MB L2, 35.6 TF FP32, "
     "FP16 (sparsity) 142 (285), 936 GB/s, 350 W; FP16 with FP32 accumulate 71 per the "
     "Fdddhhhill/Advanced_AI_GPU_Benchmark_Dataset (huggingface.co, 2025) and 71.2 per "
     "ctc.archdevil.net (2024)",
     "Tensor FP16/BF16 are the FP32-accumulate figures; with FP16 accumulate FP16 is 142. "
     "TF32 and INT8 tensor are null: not published in a document found when the table was "
     "checked. No FP8 (Ampere). FP64 not listed.",
     "rtx 3090 !ti !laptop"},
    {"rtx-a6000", "NVIDIA RTX A6000", "NVIDIA", "Ampere", 48, 768,
     PEAKS(NA, NA, NA, 38.7, NA, 154.8, NA, 154.8, NA, NA, 309.7), 84, 1800, 6, 300,
     "llmperf.net 'Nvidia-A6000-GPUs' summary (2025) citing Microway 'In-Depth Comparison of "
     "NVIDIA Ampere GPU Accelerators' and pny.com: 84 SMs, 1800 MHz boost, 48 GB, 768 GB/s, "
     "300 W, FP16/BF16 tensor 154.8 dense (309.7 sparse), INT8 309.7 TOPS; sysrqmts.com RTX "
     "A6000 page (Oct 2020 part): FP32 38.71 TF, 6 MB L2",
     "Workstation Ampere runs FP16 tensor ops with FP32 accumulate at full rate. TF32 tensor is "
     "null: not published in a document found when the table was checked. No FP8. FP64 not "
     "listed.",
     "rtx a6000"},
    {"rtx-6000-ada", "NVIDIA RTX 6000 Ada Generation", "NVIDIA", "Ada Lovelace", 48, 960,
     PEAKS(NA, NA, NA, 91.1, NA, NA, NA, NA, NA, NA, NA), 142, NA, NA, 300,
     "grafikkarten.com 'NVIDIA RTX 6000 Grafikkarte der Ada-Generation' (Dec 2022): 142 SMs, "
     "18,176 CUDA / 568 tensor cores, 91.1 TF FP32, 48 GB, 960 GB/s, 300 W; "
     "huggingface.co/hardware/rtx-6000-ada (48 GB, 91.1 TF, 300 W)",
     "All tensor peaks are null: the datasheet's 1,457 TFLOPS (FP8 with sparsity, 728.5 "
     "dense) was not found in any document when the table was checked, and TF32, FP16, BF16 "
     "and INT8 tensor peaks are not published there either (add them with --gpu-spec). "
     "Public pages disagree on the boost clock (2505 vs 2535 MHz). FP64 not listed.",
     "rtx 6000 ada"},
    /* ---- NVIDIA Jetson ---- */
    {"jetson-agx-orin-64gb", "NVIDIA Jetson AGX Orin 64GB", "NVIDIA", "Ampere", 64, 204.8,
     PEAKS(NA, NA, NA, 5.3, NA, 42.5, NA, NA, NA, NA, 85), 16, 1300, 4, 60,
     "NVIDIA Jetson AGX Orin Series Technical Brief (v1.2, Jul 2022): GPU 2048 CUDA cores, "
     "64 tensor cores, 16 SMs, 4 MB L2, 1.3 GHz, 5.3 FP32 TFLOPS, 170 sparse INT8 TOPS (GPU "
     "only, halved here); Jetson AGX Orin Series Data Sheet (DS-10662-001): 64 GB LPDDR5 at "
     "204.8 GB/s, 15-60 W",
     "FP16 tensor derived: the dense INT8 figure / 2 (the Ampere tensor-core INT8:FP16 "
     "rate is 2:1). BF16/TF32 not published. The 275 TOPS headline adds the two DLAs.",
     "agx orin 64gb|agx orin !32gb !industrial"},
    {"jetson-orin-nano-8gb", "NVIDIA Jetson Orin Nano 8GB", "NVIDIA", "Ampere", 8, 68,
     PEAKS(NA, NA, NA, 1.28, NA, 10, NA, NA, NA, NA, 20), 8, 625, NA, 15,
     "NVIDIA Jetson Orin Nano Series Data Sheet (DS-11105-001, 2023): 1024 CUDA cores, 32 "
     "tensor cores, 625 MHz, 40 sparse INT8 TOPS (halved here), 8 GB LPDDR5 at 68 GB/s, "
     "7-15 W",
     "FP32 derived: 1024 cores x 2 FLOP x 0.625 GHz. FP16 tensor derived: dense INT8 / 2. "
     "SM count derived: 1024 / 128. See jetson-orin-nano-8gb-super for the JetPack 6.1 mode.",
     "orin nano !super"},
    {"jetson-orin-nano-8gb-super", "NVIDIA Jetson Orin Nano 8GB (Super mode)", "NVIDIA",
     "Ampere", 8, 102,
     PEAKS(NA, NA, NA, 2.08896, NA, 16.75, NA, NA, NA, NA, 33.5), 8, 1020, NA, 25,
     "NVIDIA Jetson Orin Nano Super Developer Kit datasheet (Dec 2024): 1020 MHz GPU, 67 "
     "sparse INT8 TOPS (halved here), 102 GB/s, up to 25 W",
     "FP32 derived: 1024 cores x 2 FLOP x 1.02 GHz. FP16 tensor derived: dense INT8 / 2.",
     "orin nano super"},
    /* ---- AMD Instinct ---- */
    {"mi300x", "AMD Instinct MI300X", "AMD", "CDNA 3", 192, 5300,
     PEAKS(163.4, 81.7, 163.4, 163.4, 653.7, 1307.4, NA, 1307.4, NA, 2614.9, 2614.9), 304, 2100,
     NA, 750,
     "AMD Instinct MI300X Accelerator data sheet (amd.com, Dec 2023): peak vector and matrix "
     "figures without sparsity; AMD CDNA 3 Instruction Set Architecture / CDNA 3 "
     "architecture whitepaper (2023) for the 304 CUs and 2100 MHz peak engine clock",
     "L2 is 4 MB per XCD (8 XCDs) plus a 256 MB Infinity Cache; no single L2 figure. "
     "Non-tensor FP16/BF16 not in the data sheet.",
     "mi300x"},
    {"mi250x", "AMD Instinct MI250X", "AMD", "CDNA 2", 128, 3200,
     PEAKS(95.7, 47.9, 95.7, 47.9, NA, 383, NA, 383, NA, NA, 383), 220, 1700, 16, 560,
     "AMD Instinct MI250X Accelerator data sheet (amd.com, Nov 2021): 220 CUs, 1700 MHz, "
     "peak FP64/FP32 vector 47.9 TF and matrix 95.7 TF, FP16/BF16 383 TF, INT8 383 TOPS, "
     "128 GB HBM2e at 3.2 TB/s, 560 W peak; AMD CDNA 2 Architecture whitepaper (2021) for "
     "the 8 MB L2 per GCD (2 GCDs)",
     "CDNA 2 has no TF32 or FP8. Typical board power 500 W, 560 W peak. Bandwidth 3.2 TB/s "
     "as printed (3276.8 GB/s exact).",
     "mi250x"},
    /* ---- the reference profiler's entries (fp32 only), so its bounds reproduce ----
     * The one source of the reference's table: rpxprof.reference.REFERENCE_GPUS is
     * built from these three (rpxprof._core.builtin_gpus), and a test checks that each
     * label states the numbers its entry holds (tests/unit/test_roofline.c). Name,
     * fp32 peak, bandwidth and memory (GB) are the reference's GPUSpec fields. */
    {"ref-a100-80gb", "A100-80GB", "NVIDIA", "Ampere", 80, 2039,
     PEAKS(NA, NA, NA, 19.5, NA, NA, NA, NA, NA, NA, NA), -1, NA, NA, NA,
     "rpx_benchmark's REFERENCE_GPUS table: 19.5 TFLOP/s fp32 and 2039 GB/s, from its "
     "worked example 4878.9 GFLOP -> 250.2 ms",
     "REFERENCE_GPUS lists fp32 only; use a100-sxm-80gb for the other precisions.", NULL},
    {"ref-rtx4090", "RTX 4090", "NVIDIA", "Ada Lovelace", 24, 1008,
     PEAKS(NA, NA, NA, 82.6, NA, NA, NA, NA, NA, NA, NA), -1, NA, NA, NA,
     "rpx_benchmark's REFERENCE_GPUS table: 82.6 TFLOP/s fp32 and 1008 GB/s, from its "
     "worked example 4878.9 GFLOP -> 59.1 ms",
     "REFERENCE_GPUS lists fp32 only; use rtx-4090 for the other precisions.", NULL},
    {"ref-jetson-orin-64gb", "Jetson Orin 64GB", "NVIDIA", "Ampere", 64, 204.8,
     PEAKS(NA, NA, NA, 5.3, NA, NA, NA, NA, NA, NA, NA), -1, NA, NA, NA,
     "rpx_benchmark's REFERENCE_GPUS table: 5.3 TFLOP/s fp32 and 204.8 GB/s, from its "
     "worked example 4878.9 GFLOP -> 920.5 ms",
     "REFERENCE_GPUS lists fp32 only; use jetson-agx-orin-64gb for the other precisions.",
     NULL},
};

size_t rpx_gpu_builtin_count(void)
{
    return sizeof builtin / sizeof builtin[0];
}

const rpx_gpu_spec *rpx_gpu_builtin_at(size_t index)
{
    return index < rpx_gpu_builtin_count() ? &builtin[index] : NULL;
}

/* ---- precisions ---- */

static const char *const prec_names[RPX_PREC_COUNT] = {"fp64", "fp32", "tf32", "fp16",
                                                       "bf16", "fp8",  "int8"};

const char *rpx_precision_name(rpx_precision p)
{
    return (unsigned)p < RPX_PREC_COUNT ? prec_names[p] : NULL;
}

const char *rpx_unit_name(int unit)
{
    return unit == RPX_UNIT_TENSOR ? "tensor" : "vector";
}

int rpx_precision_parse(const char *s, rpx_precision *out, rpx_error *err)
{
    static const struct {
        const char *alias;
        rpx_precision p;
    } aliases[] = {{"fp64", RPX_PREC_FP64},     {"float64", RPX_PREC_FP64},
                   {"double", RPX_PREC_FP64},   {"fp32", RPX_PREC_FP32},
                   {"float32", RPX_PREC_FP32},  {"float", RPX_PREC_FP32},
                   {"tf32", RPX_PREC_TF32},     {"fp16", RPX_PREC_FP16},
                   {"float16", RPX_PREC_FP16},  {"half", RPX_PREC_FP16},
                   {"bf16", RPX_PREC_BF16},     {"bfloat16", RPX_PREC_BF16},
                   {"fp8", RPX_PREC_FP8},       {"float8", RPX_PREC_FP8},
                   {"fp8_e4m3", RPX_PREC_FP8},  {"fp8_e5m2", RPX_PREC_FP8},
                   {"int8", RPX_PREC_INT8},     {"i8", RPX_PREC_INT8}};
    size_t i;
    for (i = 0; s && i < sizeof aliases / sizeof aliases[0]; i++) {
        if (strcasecmp(s, aliases[i].alias) == 0) {
            *out = aliases[i].p;
            return 0;
        }
    }
    return rpx_error_set(err, RPX_EINVAL,
                         "unknown precision '%s'; use fp64, fp32, tf32, fp16, bf16, fp8 or int8",
                         s ? s : "(null)");
}

/* ---- device-name matching ---- */

#define MAX_TOKENS 24
#define TOKEN_LEN 32

/* Lower-case tokens split at spaces and - _ / ( ) , . */
static size_t tokenize(const char *s, char tok[][TOKEN_LEN], size_t max)
{
    size_t n = 0, len = 0;
    for (;; s++) {
        int sep = !*s || strchr(" \t-_/(),", *s) != NULL;
        if (sep) {
            if (len) {
                tok[n][len] = '\0';
                if (++n == max) return n;
                len = 0;
            }
            if (!*s) return n;
            continue;
        }
        if (len < TOKEN_LEN - 1) tok[n][len++] = (char)tolower((unsigned char)*s);
    }
}

static int has_token(char tok[][TOKEN_LEN], size_t n, const char *t)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (strcmp(tok[i], t) == 0) return 1;
    return 0;
}

int rpx_gpu_pattern_match(const char *pattern, const char *device_name)
{
    char name_tok[MAX_TOKENS][TOKEN_LEN];
    size_t n_name;
    int best = 0;
    const char *alt = pattern;
    if (!pattern || !device_name) return 0;
    n_name = tokenize(device_name, name_tok, MAX_TOKENS);
    while (alt && *alt) {
        const char *bar = strchr(alt, '|');
        size_t len = bar ? (size_t)(bar - alt) : strlen(alt);
        char buf[256], *tok, *save = NULL;
        int required = 0, ok = 1;
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, alt, len);
        buf[len] = '\0';
        for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            int negate = tok[0] == '!';
            char lower[TOKEN_LEN];
            size_t i;
            const char *t = negate ? tok + 1 : tok;
            for (i = 0; t[i] && i < TOKEN_LEN - 1; i++) lower[i] = (char)tolower((unsigned char)t[i]);
            lower[i] = '\0';
            if (!lower[0]) continue;
            if (has_token(name_tok, n_name, lower) == negate) {
                ok = 0;
                break;
            }
            if (!negate) required++;
        }
        if (ok && required > best) best = required;
        alt = bar ? bar + 1 : NULL;
    }
    return best;
}

/* ---- JSON ---- */

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

json_t *rpx_gpu_spec_json(const rpx_gpu_spec *g)
{
    json_t *o = json_object(), *peaks = json_object();
    int p, ok = 1;
    if (!o || !peaks) {
        json_decref(o);
        json_decref(peaks);
        return NULL;
    }
#define SET(obj, k, v) RPX_JSON_SET(ok, obj, k, v)
    SET(o, "key", str_or_null(g->key));
    SET(o, "name", str_or_null(g->name));
    SET(o, "vendor", str_or_null(g->vendor));
    SET(o, "architecture", str_or_null(g->architecture));
    SET(o, "memory_gb", rpx_json_real_or_null(g->memory_gb));
    SET(o, "memory_bandwidth_gbps", rpx_json_real_or_null(g->memory_bandwidth_gbps));
    for (p = 0; p < RPX_PREC_COUNT; p++) {
        json_t *pair = json_object();
        if (!pair) {
            ok = 0;
            break;
        }
        SET(pair, "tensor", rpx_json_real_or_null(g->peak_tflops[p][RPX_UNIT_TENSOR]));
        SET(pair, "vector", rpx_json_real_or_null(g->peak_tflops[p][RPX_UNIT_VECTOR]));
        SET(peaks, prec_names[p], pair);
    }
    SET(o, "peak_tflops", peaks);
    SET(o, "sm_count", g->sm_count >= 0 ? json_integer(g->sm_count) : json_null());
    SET(o, "boost_clock_mhz", rpx_json_real_or_null(g->boost_clock_mhz));
    SET(o, "l2_mb", rpx_json_real_or_null(g->l2_mb));
    SET(o, "tdp_w", rpx_json_real_or_null(g->tdp_w));
    SET(o, "source", str_or_null(g->source));
    SET(o, "notes", str_or_null(g->notes));
    SET(o, "match", str_or_null(g->match));
#undef SET
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}
