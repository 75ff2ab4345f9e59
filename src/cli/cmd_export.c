/* SPDX-License-Identifier: MIT */
/* cmd_export.c: `gorila export RUN|CHECKPOINT FILE.npz|FILE.bin
 * [--checkpoint latest|final|best|PATH] [--json]`: write a checkpoint's
 * network to a file without evaluating it, and say what was written.
 *
 * The checkpoint is chosen and loaded as `gorila eval` does (clickpt_load
 * in cmd_eval.c: the same targets, --checkpoint values, messages and exit
 * statuses). FILE must end in .npz (the NumPy archive of npz.h, for NumPy
 * or PyTorch; scripts/npz_policy.py reads it) or .bin (the raw flat
 * float32 parameters, for bit-for-bit comparisons): any other name is
 * refused, so that swapped arguments or a typo never create a file. The
 * file is written through a temporary beside it and renamed onto it
 * (npz_out_open), so FILE is either as it was or the whole export. The one
 * line printed on stdout (cli_export) names the file, its format and size,
 * the network and the checkpoint with its update count. `gorila eval
 * --export` calls cli_export too, printing the line on stderr. */
#include "cmd.h"
#include "exitcode.h"
#include "json.h"
#include "npz.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* "4-16-2", or "4-8-8-2 dueling": observation, hidden widths, actions. */
static void shape_of(const QNetSpec *s, char *out, size_t size) {
    size_t n = (size_t)snprintf(out, size, "%d", s->obs_dim);
    for (int l = 0; l < s->n_hidden && n < size; l++) n += (size_t)snprintf(out + n, size - n, "-%d", s->hidden[l]);
    if (n < size) snprintf(out + n, size - n, "-%d%s", s->n_actions, s->dueling ? " dueling" : "");
}

static void print_json(FILE *out, const CliCkpt *c, const char *path, bool raw, const NpzWritten *done) {
    const RunCkptManifest *m = &c->man;
    const QNetSpec *s = &c->net.spec;
    JsonW j;
    json_init(&j, out, false);
    json_begin_object(&j, NULL);
    json_str(&j, "path", path);
    json_bool(&j, "replaced", done->replaced);
    json_str(&j, "format", raw ? "raw" : "npz");
    json_u64(&j, "bytes", done->bytes);
    json_u64(&j, "n_params", c->net.n_params);
    json_str(&j, "env", c->cfg->env.name);
    json_u64(&j, "obs_dim", (uint64_t)s->obs_dim);
    json_u64(&j, "num_actions", (uint64_t)s->n_actions);
    json_begin_array(&j, "hidden");
    for (int l = 0; l < s->n_hidden; l++) json_u64(&j, NULL, (uint64_t)s->hidden[l]);
    json_end_array(&j);
    json_bool(&j, "dueling", s->dueling);
    json_str(&j, "checkpoint", m->dir);
    json_str(&j, "kind", m->kind[0] ? m->kind : "periodic");
    json_u64(&j, "params_version", m->params_version);
    json_u64(&j, "updates", m->updates);
    json_u64(&j, "env_steps", m->env_steps);
    if (m->eval_episodes > 0) {
        json_num(&j, "logged_eval_mean", m->eval_mean);
        json_u64(&j, "logged_eval_episodes", (uint64_t)m->eval_episodes);
        json_u64(&j, "logged_eval_seed", m->eval_seed);
    }
    json_end_object(&j);
    fputc('\n', out);
}

int cli_export(const CliCkpt *c, const char *path, FILE *out, bool json, char *err) {
    /* A file-size limit (ulimit -f) would kill the process with SIGXFSZ and
     * leave the temporary behind; ignored, the write fails with EFBIG and
     * the temporary is removed like after any other write error. */
    signal(SIGXFSZ, SIG_IGN);
    bool raw = npz_wants_raw(path);
    NpzWritten done = {0};
    if (raw ? npz_export_raw(path, c->params, c->net.n_params, &done, err)
            : npz_export_qnet(path, c->cfg, &c->net, c->params, &done, err))
        return -1;
    if (json) {
        print_json(out, c, path, raw, &done);
        return 0;
    }
    char shape[160], what[256];
    shape_of(&c->net.spec, shape, sizeof shape);
    clickpt_describe(&c->man, what, sizeof what);
    fprintf(out, "%s %s (%s, %" PRIu64 " bytes): %s network %s, %zu parameters, from %s (%s)\n",
            done.replaced ? "replaced" : "wrote", path, raw ? "raw float32" : "npz", done.bytes,
            c->cfg->env.name, shape, c->net.n_params, c->man.dir, what);
    return 0;
}

static const char export_usage[] =
    "usage: gorila export RUN|CHECKPOINT FILE [--checkpoint WHICH] [--json]\n"
    "  RUN|CHECKPOINT  a run directory or a checkpoint directory\n"
    "  FILE            FILE.npz: the network as a NumPy .npz (PyTorch (out, in)\n"
    "                  weights, env and sizes; docs/CHECKPOINT.md); FILE.bin: its\n"
    "                  raw float32 parameters. Created, or a regular file replaced\n"
    "                  whole, through a temporary (links, devices, FIFOs and\n"
    "                  directories are refused)\n"
    "  --checkpoint    in a run directory: latest (default), final, best, or a checkpoint path\n"
    "  --json          one JSON object instead of the text line\n"
    "Writes the file without evaluating the network (gorila eval evaluates) and\n"
    "prints one line: the file, its format and size, the network, its parameter\n"
    "count and the checkpoint with its update count.\n";

/* Whether s ends in suffix. */
static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int cmd_export(int argc, char **argv) {
    const char *target = NULL, *path = NULL, *which = NULL;
    bool json = false;
    char err[ERR_LEN];
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "--checkpoint")) {
            if (i + 1 >= argc) return usage_error("export: --checkpoint needs latest, final, best or a path");
            which = argv[++i];
        } else if (!strcmp(s, "--json")) {
            json = true;
        } else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(export_usage, stdout);
            return 0;
        } else if (!strcmp(s, "--episodes") || !strcmp(s, "--seed")) {
            return usage_error("export: %s: export does not evaluate (gorila eval RUN %s ... evaluates)", s, s);
        } else if (s[0] == '-' && s[1] != '\0') {
            fputs(export_usage, stderr);
            return usage_error("export: unknown option %s", s);
        } else if (!target) {
            target = s;
        } else if (!path) {
            path = s;
        } else {
            return usage_error("export: more than RUN|CHECKPOINT and FILE given (\"%s\")", s);
        }
    }
    if (!target) return usage_error("export: missing RUN|CHECKPOINT and FILE (gorila export RUN FILE.npz)");
    if (!path) return usage_error("export: missing FILE, the file to write (FILE.npz, or FILE.bin for raw float32)");
    if (!ends_with(path, ".npz") && !ends_with(path, ".bin"))
        return usage_error("export: %s: FILE must end in .npz (NumPy archive) or .bin (raw float32 parameters)",
                           path);
    CliCkpt c;
    int rc = clickpt_load(&c, "export", target, which);
    if (rc) return rc;
    if (cli_export(&c, path, stdout, json, err)) {
        rc = usage_error("export: %s", err);
    } else if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "gorila: error: export: wrote %s, but printing what was written failed: %s\n", path,
                strerror(errno ? errno : EIO));
        rc = GORILA_EXIT_FAILED;
    }
    clickpt_free(&c);
    return rc;
}
