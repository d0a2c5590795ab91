/* vary.c — owns what each worker process varies for itself before its target
 * is loaded, so that the run's processes sample the factors that would
 * otherwise be fixed for the whole run (docs/statistics.md, "What the
 * processes sample"): the inputs' physical pages and their offset in a page
 * (each array copied into fresh pages at a random multiple of
 * RPX_TENSOR_ALIGN bytes), the stack's depth (a random pad below the stage's
 * frame) and the heap and mmap layout (a random pad on each). A forked worker
 * otherwise inherits all of these from the parent: the same pages of the
 * inputs the parent loaded once, the same addresses. Nothing here runs in
 * the timed loop: the copies are made once, before the model is loaded. */
#include <alloca.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rpxprof/model.h"
#include "runner/runner_internal.h"

/* The inputs a worker copies for itself, at most (all samples together): a
 * larger set keeps the parent's pages, and the report says the inputs were
 * not varied (rpx__vary_describe). */
#define VARY_INPUT_MAX_BYTES ((size_t)256 << 20)

/* splitmix64: the worker's own draws from one seed */
static uint64_t next_draw(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t worker_seed(int process_index)
{
    uint64_t s = 0;
    struct timespec ts;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16);
    }
    return s ^ (uint64_t)process_index * 0x2545f4914f6cdd1dULL;
}

size_t rpx__vary_input_bytes(const rpx_inputs *samples, size_t n)
{
    size_t k, i, total = 0;
    for (k = 0; k < n; k++)
        for (i = 0; i < samples[k].count; i++) total += samples[k].tensors[i].nbytes;
    return total;
}

int rpx__vary_inputs_on(const run_plan *plan)
{
    return plan->c->isolate && plan->samples && plan->n_samples > 0 &&
           rpx__vary_input_bytes(plan->samples, plan->n_samples) > 0 &&
           rpx__vary_input_bytes(plan->samples, plan->n_samples) <= VARY_INPUT_MAX_BYTES;
}

/* Copies of every sample's arrays into fresh pages at a random offset (a
 * multiple of RPX_TENSOR_ALIGN below a page), read-only unless the run's
 * inputs are writable (then the copies are what the calls edit and restore
 * from plan->pristine puts back). The copies live until the worker exits.
 * 0, or -1 (out of memory: the worker keeps the parent's pages). */
static int copy_inputs(run_plan *local, uint64_t *seed)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE), slots = page / RPX_TENSOR_ALIGN;
    const rpx_inputs *from = local->samples;
    size_t n = local->n_samples, k, i, arrays = 0, at = 0;
    rpx_inputs *to;
    rpx_tensor *t;
    for (k = 0; k < n; k++) arrays += from[k].count;
    to = calloc(n, sizeof *to);
    t = calloc(arrays ? arrays : 1, sizeof *t);
    if (!to || !t) {
        free(to);
        free(t);
        return -1;
    }
    for (k = 0; k < n; k++) {
        to[k].count = from[k].count;
        to[k].tensors = t + at;
        for (i = 0; i < from[k].count; i++, at++) {
            const rpx_tensor *src = &from[k].tensors[i];
            size_t off = (size_t)(next_draw(seed) % (slots ? slots : 1)) * RPX_TENSOR_ALIGN, len;
            unsigned char *m;
            t[at] = *src;
            if (!src->nbytes) continue;
            len = (off + src->nbytes + page - 1) / page * page;
            m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (m == MAP_FAILED) return -1; /* what is mapped stays until the worker exits */
            memcpy(m + off, src->data, src->nbytes);
            if (!local->pristine) (void)mprotect(m, len, PROT_READ); /* read-only, as the parent's */
            t[at].data = m + off;
        }
    }
    local->samples = to;
    return 0;
}

/* RPX_TEST_VARY (a test and benchmark knob, bench/bench_within_run.py): the
 * factors to vary, "none", "all" (the default), "inputs", "layout" (stack,
 * heap and mmap) or a comma list of inputs, stack, heap, mmap. */
static unsigned knob(void)
{
    const char *v = getenv("RPX_TEST_VARY");
    unsigned bits = 0;
    if (!v || !*v || !strcmp(v, "all")) return ~0u;
    if (strstr(v, "inputs")) bits |= RPX_VARIED_INPUTS;
    if (strstr(v, "layout")) bits |= RPX_VARIED_STACK | RPX_VARIED_HEAP | RPX_VARIED_MMAP;
    if (strstr(v, "stack")) bits |= RPX_VARIED_STACK;
    if (strstr(v, "heap")) bits |= RPX_VARIED_HEAP;
    if (strstr(v, "mmap")) bits |= RPX_VARIED_MMAP;
    return bits;
}

void rpx__vary_worker(run_plan *local, int process_index, run_shared *sh)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const unsigned on = knob();
    uint64_t seed = worker_seed(process_index);
    size_t heap_pad = (size_t)(next_draw(&seed) % 4096) * 16;   /* 0 to 64 KiB of the heap */
    size_t map_pad = (size_t)(next_draw(&seed) % 512) * page;   /* 0 to 511 pages of mmap space */
    void *h, *m = MAP_FAILED;
    sh->stack_pad = 0;
    if (!(on & RPX_VARIED_HEAP)) heap_pad = 0;
    if (!(on & RPX_VARIED_MMAP)) map_pad = 0;
    /* the heap: later small blocks (the model's) start past a pad of its own size */
    sh->varied = RPX_VARIED_RAN;
    h = heap_pad ? malloc(heap_pad) : NULL;
    if (h) memset(h, 0, heap_pad);
    if ((on & RPX_VARIED_HEAP) && (h || !heap_pad)) sh->varied |= RPX_VARIED_HEAP;
    /* mmap space: the next mappings (large blocks, the model's libraries) land
     * that many pages lower, so their offset in a huge page varies too */
    if (map_pad) m = mmap(NULL, map_pad, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if ((on & RPX_VARIED_MMAP) && (m != MAP_FAILED || !map_pad)) sh->varied |= RPX_VARIED_MMAP;
    if ((on & RPX_VARIED_INPUTS) && rpx__vary_inputs_on(local) && copy_inputs(local, &seed) == 0)
        sh->varied |= RPX_VARIED_INPUTS;
    if (on & RPX_VARIED_STACK) {
        sh->stack_pad = (size_t)(next_draw(&seed) % 512) * 16;  /* 0 to 8 KiB of the stack */
        sh->varied |= RPX_VARIED_STACK;
    }
    /* h and m are kept until the worker exits */
}

/* The factors every process of the run sampled (the bits all of them set). */
static unsigned varied_by_all(const workers *w)
{
    unsigned all = w->n > 0 ? ~0u : 0u;
    int i;
    for (i = 0; i < w->n; i++) all &= w->proc[i]->varied;
    return all;
}

static void fixed(json_t *a, const char *factor, const char *why)
{
    json_array_append_new(a, json_pack("{ssss}", "factor", factor, "why", why));
}

void rpx__vary_describe(const workers *w, json_t *ci)
{
    static const struct { unsigned bit; const char *name; } names[] = {
        {RPX_VARIED_INPUTS, "input_pages"}, {RPX_VARIED_INPUTS, "input_offset"},
        {RPX_VARIED_STACK, "stack"},        {RPX_VARIED_HEAP, "heap"},
        {RPX_VARIED_MMAP, "mmap"}};
    unsigned all = varied_by_all(w);
    json_t *v = json_array(), *f = json_array();
    size_t i;
    if (!ci || !v || !f) {
        json_decref(v);
        json_decref(f);
        return;
    }
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (all & names[i].bit) json_array_append_new(v, json_string(names[i].name));
    fixed(f, "time",
          "the processes run one after another within the run: its interval does not cover "
          "the drift of the machine from one run to the next, even back to back; compare "
          "separate runs with the between-session rule (docs/statistics.md), or measure both "
          "sides in one run (compare --run)");
    if (!(all & RPX_VARIED_INPUTS))
        fixed(f, "inputs",
              w->n > 0 && !(w->proc[0]->varied & RPX_VARIED_RAN)
                  ? "the processes were not isolated (--no-isolate): every process read the "
                    "same pages of the inputs, at the same addresses"
                  : "every process read the pages of the inputs the parent loaded once (no "
                    "inputs, or more than 256 MiB of them, which are not copied per process, or "
                    "RPX_TEST_VARY left them out)");
    json_object_set_new(ci, "varied", v);
    json_object_set_new(ci, "fixed_per_run", f);
}

/* The stage below a stack pad of the worker's own. */
static __attribute__((noinline)) void padded(const run_params *p, run_shared *sh,
                                             void (*stage)(const run_params *, run_shared *))
{
    volatile char *pad = alloca(sh->stack_pad + 16);
    pad[0] = 0;
    __asm__ volatile("" : : "r"(pad) : "memory");
    stage(p, sh);
    __asm__ volatile("" : : "r"(pad) : "memory");
}

void rpx__vary_stage(const run_params *p, run_shared *sh,
                     void (*stage)(const run_params *, run_shared *))
{
    run_plan local = *p->plan;
    run_params lp = *p;
    lp.plan = &local;
    rpx__vary_worker(&local, p->process_index, sh);
    padded(&lp, sh, stage);
}
