/* SPDX-License-Identifier: MIT */
/* cmd_config.c: `gorila config check FILE [--set key=value]...` and
 * `gorila config place FILE [--set key=value]... --hosts H:S,...`.
 *
 * Loads and validates a config exactly as `gorila train` would, then prints
 * the effective config (config_write), the memory plan (memplan_print: what
 * each rank allocates, all ranks against this machine's memory), the rank
 * layout (layout_print) and a last line "ranks: N", the number of MPI ranks
 * the job needs; with --json, one JSON object instead,
 * {"config": {...}, "ranks": N, "n_params": K} (config_write_json; K the
 * Q-network's parameter count). Exit status: 0 valid, 2 invalid config, a job whose ranks
 * do not fit this machine's memory (memplan_check, the check gorila train
 * runs too) or bad arguments (one error line on stderr, nothing on stdout).
 *
 * `config place` prints the rank layout with the host each rank runs on
 * across the given hosts (placement_nodes, or placement_spread with
 * --spread), one line per rank: what
 * scripts/launch --hostfile turns into Open MPI's sequential mapping.
 */
#include "cmd.h"
#include "agentcfg.h"
#include "cliload.h"
#include "config.h"
#include "json.h"
#include "layout.h"
#include "memplan.h"
#include "netprint.h"
#include "placement.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char check_usage[] =
    "usage: gorila config check FILE [--set key.path=value]... [--ranks-elsewhere] [--json]\n"
    "\n"
    "Validate FILE with the overrides applied, print the effective config,\n"
    "the memory plan (what each rank allocates), the rank layout and the\n"
    "number of ranks the job needs. --json prints one JSON object instead:\n"
    "{\"config\": {\"run\": {\"name\": ..., ...}, ...}, \"ranks\": N, \"n_params\": K},\n"
    "the keys of the effective config with their values, the ranks, and the\n"
    "Q-network's parameter count. A job whose ranks would not fit this\n"
    "machine's memory is refused (docs/CONFIG.md, \"Memory plan\"), unless\n"
    "--ranks-elsewhere says they run on other hosts (scripts/launch --hostfile:\n"
    "each host then checks its own ranks when the job starts).\n"
    "Exit status: 0 valid, 2 invalid config, not enough memory or bad arguments.\n";

static const char place_usage[] =
    "usage: gorila config place FILE [--set key.path=value]... --hosts HOST:SLOTS[,HOST:SLOTS]...\n"
    "                           [--oversubscribe] [--spread]\n"
    "\n"
    "Print the host each rank of FILE's job runs on across the hosts, in\n"
    "their order: the learners with the parameter-server shards, each replay\n"
    "shard with its actors, on one host where they fit, spread over the hosts\n"
    "in proportion to their slots (docs/MULTIHOST.md). --spread: every learner\n"
    "and every PS shard on a host of its own while hosts last (learners, then\n"
    "shards, then each replay shard with its actors, dealt round-robin), so\n"
    "the learners' sync traffic crosses the network. Fewer slots than ranks\n"
    "is an error unless --oversubscribe. Exit status: 0, or 2.\n";

enum { MAX_HOSTS = 4096, HOST_NAME_LEN = 256 };

typedef struct {
    const char *file;
    const char *sets[CFG_MAX_SETS];
    int n_sets;
    const char *hosts;  /* config place: --hosts */
    bool oversubscribe; /* config place */
    bool spread;        /* config place: placement_spread instead of placement_nodes */
    bool ranks_elsewhere; /* config check: the ranks run on other hosts (scripts/launch --hostfile): plan,
                             but leave the memory check to each host at start-up (src/mpi/job.c) */
    bool json;          /* config check: the config and the rank count as one JSON object */
} ConfigArgs;

/* Parses argv (argv[0] is the subcommand); place: accept the options of
 * config place. Returns -1 when done (help printed: status 0), 0 to go on,
 * or a usage error's status. */
static int parse_args(int argc, char **argv, bool place, ConfigArgs *a, int *status) {
    const char *cmd = place ? "config place" : "config check";
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        const char *s = argv[i];
        const char *value = NULL;
        if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
            fputs(place ? place_usage : check_usage, stdout);
            *status = 0;
            return -1;
        }
        if (place && !strcmp(s, "--hosts")) {
            if (i + 1 >= argc) return *status = usage_error("%s: --hosts needs HOST:SLOTS[,HOST:SLOTS]...", cmd), -1;
            a->hosts = argv[++i];
            continue;
        }
        if (place && !strcmp(s, "--oversubscribe")) {
            a->oversubscribe = true;
            continue;
        }
        if (place && !strcmp(s, "--spread")) {
            a->spread = true;
            continue;
        }
        if (!place && !strcmp(s, "--ranks-elsewhere")) {
            a->ranks_elsewhere = true;
            continue;
        }
        if (!place && !strcmp(s, "--json")) {
            a->json = true;
            continue;
        }
        if (!strcmp(s, "--set")) {
            if (i + 1 >= argc) return *status = usage_error("%s: --set needs a key.path=value argument", cmd), -1;
            value = argv[++i];
        } else if (!strncmp(s, "--set=", 6)) {
            value = s + 6;
        } else if (s[0] == '-' && s[1] != '\0') {
            return *status = usage_error("%s: unknown option \"%s\" (see gorila %s --help)", cmd, s, cmd), -1;
        } else if (a->file) {
            return *status = usage_error("%s: expected one FILE, got \"%s\" and \"%s\"", cmd, a->file, s), -1;
        } else {
            a->file = s;
            continue;
        }
        if (a->n_sets == CFG_MAX_SETS) return *status = usage_error("%s: expected at most %d --set", cmd, CFG_MAX_SETS), -1;
        a->sets[a->n_sets++] = value;
    }
    if (!a->file) return *status = usage_error("%s: missing FILE (see gorila %s --help)", cmd, cmd), -1;
    return 0;
}

static int check_loaded(const ConfigArgs *a, Config *cfg);

static int config_check(int argc, char **argv) {
    ConfigArgs a;
    int status;
    if (parse_args(argc, argv, false, &a, &status) != 0) return status;
    Config *cfg = xmalloc(sizeof *cfg);
    PyEnvHost py;
    char err[ERR_LEN];
    /* A Python environment is opened (cliload_env) as a run would: its
     * spaces give the network's input and output sizes. */
    int rc = config_load(cfg, a.file, a.sets, a.n_sets, err) || cliload_env(cfg, &py, err)
                 ? usage_error("%s", err)
                 : check_loaded(&a, cfg);
    pyenv_close(&py);
    free(cfg);
    return rc;
}

/* config check with cfg loaded (and its environment resolved). */
static int check_loaded(const ConfigArgs *a, Config *cfg) {
    char err[ERR_LEN];
    Layout lay;
    layout_init(&lay, cfg);
    MemPlan plan;
    MemMachine machine;
    if (memplan_ranks(cfg, &lay, NULL, 0, &plan, err) != 0 || memplan_machine(&machine, err) != 0 ||
        (!a->ranks_elsewhere && memplan_check(cfg, &plan, &machine, err) != 0))
        return usage_error("%s", err);
    if (a->json) {
        QNet net; /* before the object: an error must leave nothing on stdout */
        if (agentcfg_qnet(cfg, &net, err) != 0) return usage_error("%s", err);
        JsonW j;
        json_init(&j, stdout, true);
        json_begin_object(&j, NULL);
        config_write_json(cfg, &j, "config");
        json_num(&j, "ranks", lay.size);
        json_u64(&j, "n_params", (uint64_t)net.n_params);
        json_end_object(&j);
        return 0;
    }
    QNet net;
    if (agentcfg_qnet(cfg, &net, err) != 0) return usage_error("%s", err);
    config_write(cfg, stdout);
    fputc('\n', stdout);
    netprint_layers(&net, stdout);
    fputc('\n', stdout);
    memplan_print(&plan, &machine, stdout);
    fputc('\n', stdout);
    layout_print(&lay, stdout);
    printf("ranks: %d\n", lay.size);
    return 0;
}

/* Parse --hosts HOST:SLOTS[,HOST:SLOTS]... into names and slots, with
 * scripts/launch's grammar: SLOTS only digits (no sign or blank), a host
 * name without blanks, and a host named twice adding up its slots. The
 * number of hosts, or -1 with the message printed (a usage status). */
static int parse_hosts(const char *hosts, char (*names)[HOST_NAME_LEN], int *slots) {
    int n = 0;
    for (const char *p = hosts; *p;) {
        const char *end = strchr(p, ','), *colon = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (!colon || colon >= p + len || colon == p)
            return usage_error("config place: --hosts expects HOST:SLOTS[,HOST:SLOTS]..., got \"%.*s\"", (int)len, p), -1;
        size_t hl = (size_t)(colon - p);
        if (hl >= HOST_NAME_LEN) return usage_error("config place: host name too long: %.*s", (int)hl, p), -1;
        if (strcspn(p, " \t\r\n") < hl)
            return usage_error("config place: host name \"%.*s\" has a blank in it", (int)hl, p), -1;
        size_t sl = (size_t)(p + len - colon - 1);
        long v = sl > 0 && sl <= 7 && strspn(colon + 1, "0123456789") == sl ? strtol(colon + 1, NULL, 10) : -1;
        int i = 0;
        while (i < n && (strlen(names[i]) != hl || memcmp(names[i], p, hl) != 0)) i++;
        if (v >= 0 && i < n) v += slots[i];
        if (v < 0 || v > 1000000)
            return usage_error("config place: slots of %.*s must be a count up to 1000000, got \"%.*s\"", (int)hl, p,
                               (int)sl, colon + 1), -1;
        if (i == n) {
            if (n == MAX_HOSTS) return usage_error("config place: more than %d hosts", MAX_HOSTS), -1;
            memcpy(names[n], p, hl);
            names[n++][hl] = '\0';
        }
        slots[i] = (int)v;
        p += len + (end ? 1 : 0);
    }
    return n;
}

static int config_place(int argc, char **argv) {
    ConfigArgs a;
    int status;
    if (parse_args(argc, argv, true, &a, &status) != 0) return status;
    if (!a.hosts) return usage_error("config place: missing --hosts HOST:SLOTS[,HOST:SLOTS]...");
    static char names[MAX_HOSTS][HOST_NAME_LEN];
    static int slots[MAX_HOSTS];
    int n = parse_hosts(a.hosts, names, slots);
    if (n < 0) return EXIT_USAGE;
    if (n == 0) return usage_error("config place: --hosts names no host");
    Config cfg;
    char err[ERR_LEN];
    if (config_load(&cfg, a.file, a.sets, a.n_sets, err)) return usage_error("%s", err);
    if (cfg.run.mode == RUN_LOCAL) return usage_error("config place: %s runs in one process (run.mode: local)", a.file);
    Layout lay;
    layout_init(&lay, &cfg);
    int *node_of = xmalloc((size_t)lay.size * sizeof(int));
    int placed = a.spread ? placement_spread(&lay, slots, n, a.oversubscribe, node_of, err)
                          : placement_nodes(&lay, slots, n, a.oversubscribe, node_of, err);
    if (placed != 0) {
        free(node_of);
        return usage_error("%s", err);
    }
    printf("rank  role         index  host\n");
    for (int rank = 0; rank < lay.size; rank++) {
        Role role;
        int index;
        layout_role_of(&lay, rank, &role, &index);
        char idx[32];
        snprintf(idx, sizeof idx, "%d/%d", index, lay.count[role]);
        printf("%4d  %-11s  %-5s  %s\n", rank, role_name(role), idx, names[node_of[rank]]);
    }
    free(node_of);
    return 0;
}

int cmd_config(int argc, char **argv) {
    if (argc < 2) return usage_error("config: expected a subcommand: check or place");
    if (!strcmp(argv[1], "check")) return config_check(argc - 1, argv + 1);
    if (!strcmp(argv[1], "place")) return config_place(argc - 1, argv + 1);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(check_usage, stdout);
        return 0;
    }
    return usage_error("config: unknown subcommand \"%s\" (expected check or place)", argv[1]);
}
