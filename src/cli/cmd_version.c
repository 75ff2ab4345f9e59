/* SPDX-License-Identifier: MIT */
/* cmd_version.c: `gorila version [--kernels | --json]`.
 *
 * The first line is the build (gorila_build(): what a job's ranks compare),
 * then, in a git checkout, `git describe` of the commit it was built from,
 * the licence of the binary (an SPDX expression), then the CPU and the OpenBLAS kernel this process computes with, which
 * decide the rounding of every result (docs/REPRODUCIBILITY.md).
 * --kernels lists OpenBLAS's x86-64 kernels, one a line: the name, "runs"
 * or "lacks" and the CPU flags it lacks; `make test-kernels` runs the
 * suite once per kernel this CPU runs.
 * --json prints the same facts and the names tools would otherwise copy
 * from this source (scripts/compare: tools/compare/facts.py) as one JSON
 * line: the sync.mode and sync.allreduce_impl names from the config loader's tables,
 * the roles of a distributed job as summary.json names them, and the bins
 * of the parameter servers' staleness histogram (proto.h).
 */
#include "allreduce.h"
#include "cmd.h"
#include "config.h"
#include "ctx.h"
#include "json.h"
#include "platform.h"
#include "proto.h"
#include "version.h"

#include <stdio.h>
#include <string.h>

static const char version_usage[] =
    "usage: gorila version [--kernels | --json]\n"
    "\n"
    "Print the release and source id of this build, then the CPU and the\n"
    "OpenBLAS kernel in use (OPENBLAS_CORETYPE or run.blas_kernel choose\n"
    "another); built in a git checkout, also `git describe` of it, and the\n"
    "licence of the binary. --kernels: each OpenBLAS kernel, whether this CPU runs it\n"
    "and the CPU flags it lacks. --json: one JSON object, {\"version\",\n"
    "\"git_describe\", \"license\", \"source\", \"build\", \"platform\", \"sync_modes\", \"allreduce_impls\",\n"
    "\"roles\", \"staleness_bins\", \"allreduce_segment_floats\", \"sync_mode_facts\"}; the last\n"
    "says per sync mode what its layout needs: {\"param_servers\" (whether it\n"
    "uses them), \"allreduce_impl\" (whether it runs sync.allreduce_impl),\n"
    "\"min_learners\", \"decentralized\" (each learner steps its own copy),\n"
    "\"every_key\" (the sync key of its period, or null)}.\n";

static void list_kernels(void) {
    for (int i = 0; i < platform_kernel_count(); i++) {
        const char *name = platform_kernel_name(i);
        char missing[256];
        if (platform_kernel_missing(name, missing, sizeof missing)) printf("%s lacks %s\n", name, missing);
        else printf("%s runs\n", name);
    }
}

/* The names an enum's name function gives for 0, 1, ... up to its "?" (the
 * name of a value past the table's end), as array `key`. */
static void json_names(JsonW *j, const char *key, const char *(*name)(int)) {
    json_begin_array(j, key);
    for (int v = 0; v < 64 && strcmp(name(v), "?") != 0; v++) json_str(j, NULL, name(v));
    json_end_array(j);
}

static const char *sync_name(int v) { return config_sync_name((SyncMode)v); }
static const char *allreduce_name(int v) { return config_allreduce_impl_name((AllreduceImpl)v); }
/* The roles of a distributed job, in rank order: those before ROLE_LOCAL. */
static const char *job_role_name(int v) { return v < ROLE_LOCAL ? role_name((Role)v) : "?"; }

/* What each sync mode asks of its layout (configcheck.c's rules), so that
 * tools read it rather than copy it. */
static void sync_mode_facts(JsonW *j) {
    json_begin_object(j, "sync_mode_facts");
    for (int v = 0; v < 64 && strcmp(sync_name(v), "?") != 0; v++) {
        SyncMode m = (SyncMode)v;
        json_begin_object(j, sync_name(v));
        json_bool(j, "param_servers", !config_sync_no_ps(m));
        json_bool(j, "allreduce_impl", config_sync_uses_allreduce(m));
        json_u64(j, "min_learners", (uint64_t)config_sync_min_learners(m));
        json_bool(j, "decentralized", config_sync_decentral(m));
        if (config_sync_every_key(m)) json_str(j, "every_key", config_sync_every_key(m));
        else json_null(j, "every_key");
        json_end_object(j);
    }
    json_end_object(j);
}

static void print_json(void) {
    Platform p;
    platform_read(&p);
    JsonW j;
    json_init(&j, stdout, false);
    json_begin_object(&j, NULL);
    json_str(&j, "version", gorila_version());
    if (gorila_git_describe()[0]) json_str(&j, "git_describe", gorila_git_describe());
    else json_null(&j, "git_describe");
    json_str(&j, "license", gorila_license());
    json_str(&j, "source", gorila_source_id());
    json_str(&j, "build", gorila_build());
    platform_json(&j, "platform", &p);
    json_names(&j, "sync_modes", sync_name);
    json_names(&j, "allreduce_impls", allreduce_name);
    json_names(&j, "roles", job_role_name);
    json_u64(&j, "staleness_bins", PROTO_STALENESS_BINS);
    /* the naive allreduce's pipeline unit (the comparison's cost model) */
    json_u64(&j, "allreduce_segment_floats", RING_SEGMENT);
    sync_mode_facts(&j);
    json_end_object(&j);
    putchar('\n');
}

int cmd_version(int argc, char **argv) {
    bool kernels = false, json = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(version_usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--kernels")) kernels = true;
        else if (!strcmp(argv[i], "--json")) json = true;
        else return usage_error("version: unknown argument \"%s\"", argv[i]);
    }
    if (kernels && json) return usage_error("version: --kernels and --json do not go together");
    if (kernels) {
        list_kernels();
        return 0;
    }
    if (json) {
        print_json();
        return 0;
    }
    printf("%s\n", gorila_build());
    if (gorila_git_describe()[0]) printf("checkout: %s\n", gorila_git_describe());
    printf("license: %s\n", gorila_license());
    Platform p;
    platform_read(&p);
    platform_print(stdout, &p);
    putchar('\n');
    return 0;
}
