/* cpu_arm.c — owns the names of Arm CPUs. An aarch64 /proc/cpuinfo has no
 * "model name"; it gives the MIDR fields "CPU implementer" and "CPU part".
 *
 * Source of the ids: util-linux, sys-utils/lscpu-arm.c (the tables `lscpu`
 * uses), which follows the vendors' Technical Reference Manuals (MIDR_EL1).
 * Only the implementers and parts likely to run inference are kept; an id
 * not listed gives null with a reason, never a guess. */
#include <stddef.h>

#include "system/system_internal.h"

typedef struct arm_name {
    unsigned id;
    const char *name;
} arm_name;

static const arm_name implementers[] = {
    {0x41, "ARM"},     {0x42, "Broadcom"}, {0x43, "Cavium"},   {0x46, "Fujitsu"},
    {0x48, "HiSilicon"}, {0x4e, "NVIDIA"}, {0x50, "APM"},      {0x51, "Qualcomm"},
    {0x53, "Samsung"}, {0x56, "Marvell"},  {0x61, "Apple"},
    {0xc0, "Ampere"},
};

typedef struct arm_part {
    unsigned implementer, part;
    const char *name;
} arm_part;

static const arm_part parts[] = {
    /* ARM Ltd. */
    {0x41, 0xd03, "Cortex-A53"},   {0x41, 0xd04, "Cortex-A35"},   {0x41, 0xd05, "Cortex-A55"},
    {0x41, 0xd07, "Cortex-A57"},   {0x41, 0xd08, "Cortex-A72"},   {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},   {0x41, 0xd0b, "Cortex-A76"},   {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd0d, "Cortex-A77"},   {0x41, 0xd40, "Neoverse-V1"},  {0x41, 0xd41, "Cortex-A78"},
    {0x41, 0xd44, "Cortex-X1"},    {0x41, 0xd46, "Cortex-A510"},  {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},    {0x41, 0xd49, "Neoverse-N2"},  {0x41, 0xd4a, "Neoverse-E1"},
    {0x41, 0xd4d, "Cortex-A715"},  {0x41, 0xd4e, "Cortex-X3"},    {0x41, 0xd4f, "Neoverse-V2"},
    {0x41, 0xd80, "Cortex-A520"},  {0x41, 0xd81, "Cortex-A720"},  {0x41, 0xd82, "Cortex-X4"},
    {0x41, 0xd84, "Neoverse-V3"},  {0x41, 0xd8e, "Neoverse-N3"},
    /* Cavium / Marvell */
    {0x43, 0x0a1, "ThunderX 88XX"}, {0x43, 0x0af, "ThunderX2 99xx"},
    /* Fujitsu */
    {0x46, 0x001, "A64FX"},
    /* HiSilicon */
    {0x48, 0xd01, "TaiShan-v110"},
    /* NVIDIA */
    {0x4e, 0x004, "Carmel"},
    /* Qualcomm */
    {0x51, 0xc00, "Falkor"},
    /* Ampere */
    {0xc0, 0xac3, "Ampere-1"},     {0xc0, 0xac4, "Ampere-1a"},
};

const char *rpx__sys_arm_implementer(unsigned implementer)
{
    size_t i;
    for (i = 0; i < sizeof implementers / sizeof implementers[0]; i++)
        if (implementers[i].id == implementer) return implementers[i].name;
    return NULL;
}

const char *rpx__sys_arm_part(unsigned implementer, unsigned part)
{
    size_t i;
    for (i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].implementer == implementer && parts[i].part == part) return parts[i].name;
    return NULL;
}
