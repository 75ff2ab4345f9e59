/* SPDX-License-Identifier: MIT */
/* platform.c: see platform.h. */
#include "platform.h"

#include <cblas.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Flags from the kernels' instruction sets (OpenBLAS kernel/x86_64/KERNEL.*
 * and driver/others/dynamic.c's own CPU checks): SSE3 is "pni" in
 * /proc/cpuinfo. The AVX-512 kernels use F, CD, BW, DQ and VL; Cooperlake
 * adds the BF16 instructions. */
static const struct {
    const char *name;
    const char *flags;
} kernels[] = {
    {"Prescott", "sse2 pni"},
    {"Core2", "sse2 pni ssse3"},
    {"Penryn", "sse2 pni ssse3 sse4_1"},
    {"Nehalem", "sse2 pni ssse3 sse4_1 sse4_2 popcnt"},
    {"Barcelona", "sse2 pni sse4a"},
    {"Sandybridge", "sse2 pni ssse3 sse4_1 sse4_2 avx"},
    {"Bulldozer", "sse2 pni sse4a avx fma4 xop"},
    {"Haswell", "sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma"},
    {"Zen", "sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma"},
    {"SkylakeX", "sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl"},
    {"Cooperlake",
     "sse2 pni ssse3 sse4_1 sse4_2 avx avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl avx512_bf16"},
};
enum { N_KERNELS = sizeof kernels / sizeof kernels[0] };

static void copy_trimmed(char *dst, size_t n, const char *src) {
    if (!src) src = "unknown";
    while (*src == ' ' || *src == '\t') src++;
    size_t len = strlen(src);
    while (len > 0 && (src[len - 1] == ' ' || src[len - 1] == '\n' || src[len - 1] == '\t')) len--;
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* The value of the first /proc/cpuinfo line starting with key, malloc'd, or
 * NULL. */
static char *cpuinfo_value(const char *key) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return NULL;
    char *line = NULL, *value = NULL;
    size_t cap = 0, klen = strlen(key);
    while (getline(&line, &cap, f) > 0) {
        if (strncmp(line, key, klen) != 0) continue;
        char *colon = strchr(line + klen, ':');
        if (!colon) continue;
        value = strdup(colon + 1);
        break;
    }
    free(line);
    fclose(f);
    return value;
}

void platform_read(Platform *p) {
    char *model = cpuinfo_value("model name");
    copy_trimmed(p->cpu, sizeof p->cpu, model);
    free(model);
    copy_trimmed(p->blas_kernel, sizeof p->blas_kernel, openblas_get_corename());
    copy_trimmed(p->blas_config, sizeof p->blas_config, openblas_get_config());
    const char *env = getenv("OPENBLAS_CORETYPE");
    copy_trimmed(p->coretype_env, sizeof p->coretype_env, env ? env : "");
}

void platform_print(FILE *f, const Platform *p) {
    fprintf(f, "CPU %s; %s; kernel %s", p->cpu, p->blas_config, p->blas_kernel);
    if (p->coretype_env[0]) fprintf(f, " (OPENBLAS_CORETYPE=%s)", p->coretype_env);
    else fputs(" (chosen by OpenBLAS for this CPU)", f);
}

void platform_json(JsonW *j, const char *key, const Platform *p) {
    json_begin_object(j, key);
    json_str(j, "cpu", p->cpu);
    json_str(j, "blas_kernel", p->blas_kernel);
    json_str(j, "blas_config", p->blas_config);
    if (p->coretype_env[0]) json_str(j, "openblas_coretype", p->coretype_env);
    else json_null(j, "openblas_coretype");
    json_end_object(j);
}

/* s as a JSON string on stdout: a quote or backslash in a CPU name must not
 * break the line. */
static void put_json_string(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static const char *or_unset(const char *name) {
    const char *v = getenv(name);
    return v ? v : "(unset)";
}

void platform_bench_header(bool json, long threads, const char *note) {
    Platform p;
    platform_read(&p);
    if (!json) {
        printf("OpenBLAS: %s (core %s); OPENBLAS_CORETYPE=%s OPENBLAS_NUM_THREADS=%s; CPU %s%s\n", p.blas_config,
               p.blas_kernel, or_unset("OPENBLAS_CORETYPE"), or_unset("OPENBLAS_NUM_THREADS"), p.cpu, note ? note : "");
        return;
    }
    /* Compact, like the benchmarks' other JSON lines. */
    printf("{\"bench\":\"openblas\",\"config\":");
    put_json_string(p.blas_config);
    printf(",\"corename\":");
    put_json_string(p.blas_kernel);
    printf(",\"OPENBLAS_CORETYPE\":");
    put_json_string(or_unset("OPENBLAS_CORETYPE"));
    printf(",\"OPENBLAS_NUM_THREADS\":");
    put_json_string(or_unset("OPENBLAS_NUM_THREADS"));
    printf(",\"cpu\":");
    put_json_string(p.cpu);
    if (threads >= 0) printf(",\"threads\":%ld", threads);
    printf("}\n");
}

int platform_kernel_count(void) { return N_KERNELS; }

const char *platform_kernel_name(int i) { return i >= 0 && i < N_KERNELS ? kernels[i].name : NULL; }

const char *platform_kernel_find(const char *name) {
    for (int i = 0; i < N_KERNELS; i++)
        if (!strcasecmp(name, kernels[i].name)) return kernels[i].name;
    return NULL;
}

/* True when the space-separated list has the word. */
static bool has_word(const char *list, const char *word, size_t wlen) {
    for (const char *s = list; *s;) {
        while (*s == ' ' || *s == '\t' || *s == '\n') s++;
        size_t len = strcspn(s, " \t\n");
        if (len == wlen && !strncmp(s, word, wlen)) return true;
        s += len;
    }
    return false;
}

bool platform_kernel_missing(const char *name, char *missing, size_t n) {
    missing[0] = '\0';
    const char *want = NULL;
    for (int i = 0; i < N_KERNELS; i++)
        if (!strcasecmp(name, kernels[i].name)) want = kernels[i].flags;
    if (!want) {
        snprintf(missing, n, "unknown kernel");
        return true;
    }
    char *have = cpuinfo_value("flags");
    if (!have) {
        snprintf(missing, n, "cpu flags unreadable");
        return true;
    }
    for (const char *s = want; *s;) {
        size_t len = strcspn(s, " ");
        if (!has_word(have, s, len)) {
            size_t used = strlen(missing);
            snprintf(missing + used, n - used, "%s%.*s", used ? " " : "", (int)len, s);
        }
        s += len;
        while (*s == ' ') s++;
    }
    free(have);
    return missing[0] != '\0';
}

bool platform_kernel_is(const char *name) { return !strcasecmp(openblas_get_corename(), name); }
