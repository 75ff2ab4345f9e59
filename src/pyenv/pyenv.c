/* SPDX-License-Identifier: MIT */
/* pyenv.c: see pyenv.h. The only file that includes Python.h.
 *
 * Ownership: the host holds the factory, its arguments and the kwargs dict
 * (strong references); each Env slot holds a Slot (e->ext) with its
 * instance, the instance's bound reset and step, and the observation of its
 * last reset or step as floats (observe copies from there, so a failure is
 * caught where it happens, in reset_state or dynamics, and observe cannot
 * fail). Reference counts: every new reference is released on every path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pyenv.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Element types of an observation (the buffer format's letter). */
enum { OBS_F32 = 'f', OBS_F64 = 'd', OBS_U8 = 'B', OBS_BOOL = '?' };
#define MAX_NDIM 3

typedef struct {
    PyObject *env, *reset, *step;
    bool seeded;       /* its first reset has had its seed */
    float *obs;        /* spec.obs_dim floats: the last observation */
    EnvExtFailure fail_kind;  /* why it failed (e->failed), and: */
    char fail_why[ERR_LEN];   /* "step: ..." */
} Slot;

static PyEnvHost *host_of(const Env *e) { return e->spec->host; }

/* The pending Python exception as "Type: message" into buf, and its
 * traceback printed to stderr; the exception is cleared. */
static void exc_text(char *buf, size_t cap) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    const char *tn = type ? ((PyTypeObject *)type)->tp_name : "?";
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    snprintf(buf, cap, "%s%s%s", tn, msg && *msg ? ": " : "", msg ? msg : "");
    Py_XDECREF(s);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    PyErr_Print(); /* the traceback, to sys.stderr */
    fflush(stderr);
}

/* err = "env NAME: WHAT raised Type: message (traceback above)". */
static int py_fail(const char *name, const char *what, char *err) {
    char exc[256];
    exc_text(exc, sizeof exc);
    return errf(err, "env %s: %s raised %s (Python traceback above)", name, what, exc);
}

/* A run-time failure of slot e: one line to stderr, e->failed, and the
 * kind and reason kept for EnvExtern.failure. */
static void slot_fail(Env *e, EnvExtFailure kind, const char *what, const char *why) {
    Slot *s = e->ext;
    fprintf(stderr, "gorila: error: env %s: %s: %s\n", e->spec->name, what, why);
    fflush(stderr);
    e->failed = true;
    s->fail_kind = kind;
    snprintf(s->fail_why, sizeof s->fail_why, "%s: %.400s", what, why);
}

/* The pending exception of `what` (reset, step, ...) as slot e's failure. */
static void slot_raised(Env *e, const char *what) {
    char exc[256], why[ERR_LEN];
    exc_text(exc, sizeof exc);
    snprintf(why, sizeof why, "raised %s (Python traceback above)", exc);
    slot_fail(e, ENV_EXT_FAIL_CALL, what, why);
}

static const char *type_name(PyObject *o) { return Py_TYPE(o)->tp_name; }

/* The action space of instance env: Discrete(n) starting at 0 -> *n. */
static int read_actions(const char *name, PyObject *env, long *n, char *err) {
    PyObject *sp = PyObject_GetAttrString(env, "action_space");
    if (!sp) return py_fail(name, "action_space", err);
    int rc = 0;
    if (strcmp(type_name(sp), "Discrete") != 0) {
        rc = errf(err, "env %s: action_space is %s, expected Discrete(n) (gorila's agents pick one of n actions)", name,
                  type_name(sp));
    } else {
        PyObject *pn = PyObject_GetAttrString(sp, "n"), *ps = PyObject_GetAttrString(sp, "start");
        PyErr_Clear();
        *n = pn ? PyLong_AsLong(pn) : -1;
        long start = ps ? PyLong_AsLong(ps) : 0;
        PyErr_Clear();
        if (*n < 2 || *n > ENV_MAX_ACTIONS || start != 0)
            rc = errf(err, "env %s: action_space Discrete(n=%ld, start=%ld): expected 2 <= n <= %d and start 0", name,
                      *n, start, ENV_MAX_ACTIONS);
        Py_XDECREF(pn);
        Py_XDECREF(ps);
    }
    Py_DECREF(sp);
    return rc;
}

/* The letter of a buffer's format ("<f", "=d", "B", "?" ...), or 0. */
static int format_kind(const char *f) {
    if (!f) return OBS_U8;
    if (*f == '@' || *f == '=' || *f == '<') f++;
    if ((f[0] == OBS_F32 || f[0] == OBS_F64 || f[0] == OBS_U8 || f[0] == OBS_BOOL) && !f[1]) return f[0];
    return 0;
}

/* Box bound o (low or high: an array of obs_dim float32, float64 or uint8
 * values) into out as floats. Returns 0, or -1 (no such array). */
static int read_bound(const PyEnvHost *h, PyObject *o, float *out) {
    Py_buffer v;
    if (!o || PyObject_GetBuffer(o, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return -1;
    }
    int kind = format_kind(v.format), rc = 0;
    if (kind == OBS_BOOL || !kind || !v.itemsize || v.len / v.itemsize != h->spec.obs_dim) rc = -1;
    for (int i = 0; rc == 0 && i < h->spec.obs_dim; i++) {
        const char *p = (const char *)v.buf;
        out[i] = kind == OBS_F32 ? ((const float *)p)[i]
               : kind == OBS_F64 ? (float)((const double *)p)[i]
                                 : (float)((const unsigned char *)p)[i];
        if (isnan(out[i])) rc = -1;
    }
    PyBuffer_Release(&v);
    return rc;
}

/* A vector Box's low and high into h->bounds and the spec's obs_low and
 * obs_high, when it has both, ordered (only `gorila env check` reads them);
 * else none. */
static void read_bounds(PyEnvHost *h, PyObject *sp) {
    const int n = h->spec.obs_dim;
    if (h->spec.obs_type != ENV_OBS_VECTOR) return;
    PyObject *lo = PyObject_GetAttrString(sp, "low"), *hi = PyObject_GetAttrString(sp, "high");
    PyErr_Clear();
    float *b = xcalloc(2 * (size_t)n, sizeof(float));
    bool ok = read_bound(h, lo, b) == 0 && read_bound(h, hi, b + n) == 0;
    for (int i = 0; ok && i < n; i++) ok = b[i] <= b[n + i];
    Py_XDECREF(lo);
    Py_XDECREF(hi);
    if (!ok) {
        free(b);
        return;
    }
    h->bounds = b;
    h->spec.obs_low = b;
    h->spec.obs_high = b + n;
}

/* The observation space: a Box of float32/float64 (a vector) or
 * uint8/bool (planes when 3-D: H x W x C) -> h->spec's obs fields. */
static int read_obs_space(PyEnvHost *h, PyObject *env, char *err) {
    PyObject *sp = PyObject_GetAttrString(env, "observation_space");
    if (!sp) return py_fail(h->name, "observation_space", err);
    PyObject *shape = strcmp(type_name(sp), "Box") ? NULL : PyObject_GetAttrString(sp, "shape");
    PyObject *dtype = shape ? PyObject_GetAttrString(sp, "dtype") : NULL;
    PyObject *ch = dtype ? PyObject_GetAttrString(dtype, "char") : NULL;
    PyErr_Clear();
    const char *c = ch && PyUnicode_Check(ch) ? PyUnicode_AsUTF8(ch) : NULL;
    int rc = 0, kind = c ? format_kind(c) : 0;
    Py_ssize_t nd = shape && PyTuple_Check(shape) ? PyTuple_Size(shape) : -1;
    long dims[MAX_NDIM] = {0}, count = 1;
    for (Py_ssize_t i = 0; i < nd && i < MAX_NDIM; i++) {
        dims[i] = PyLong_AsLong(PyTuple_GetItem(shape, i));
        count = dims[i] >= 1 && count <= ENV_MAX_OBS ? count * dims[i] : ENV_MAX_OBS + 1;
    }
    PyErr_Clear();
    if (!shape) rc = errf(err, "env %s: observation_space is %s, expected a Box", h->name, type_name(sp));
    else if (!kind)
        rc = errf(err, "env %s: observation_space dtype %s: expected float32, float64, uint8 or bool", h->name,
                  c ? c : "?");
    else if (nd < 1 || nd > MAX_NDIM || count > ENV_MAX_OBS)
        rc = errf(err, "env %s: observation_space shape of %zd dimensions and %ld values: expected 1 to %d "
                  "dimensions and 1 to %d values", h->name, nd, count, MAX_NDIM, ENV_MAX_OBS);
    if (rc == 0) {
        h->obs_kind = kind;
        h->spec.obs_dim = (int)count;
        if (nd == 3 && (kind == OBS_U8 || kind == OBS_BOOL)) {
            h->spec.obs_type = ENV_OBS_PLANES;
            for (int i = 0; i < 3; i++) h->spec.obs_shape[i] = (int)dims[i];
        }
        read_bounds(h, sp);
    }
    Py_XDECREF(ch);
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_DECREF(sp);
    return rc;
}

/* Copy observation o into out (spec.obs_dim floats) through its buffer:
 * once, in C. Returns 0, or what it broke (ENV_EXT_FAIL_OBS or
 * ENV_EXT_FAIL_OBS_FINITE) with why (ERR_LEN bytes). */
static int copy_obs(const PyEnvHost *h, PyObject *o, float *out, char *why) {
    Py_buffer v;
    if (PyObject_GetBuffer(o, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        errf(why, "the observation is a %s, expected a C-contiguous array (numpy.ndarray)", type_name(o));
        return ENV_EXT_FAIL_OBS;
    }
    int kind = format_kind(v.format), n = h->spec.obs_dim, rc = 0;
    Py_ssize_t count = v.itemsize ? v.len / v.itemsize : 0;
    if (kind != h->obs_kind) {
        errf(why, "the observation's dtype is '%s', the observation_space's '%c'", v.format ? v.format : "B",
             h->obs_kind);
        rc = ENV_EXT_FAIL_OBS;
    } else if (count != n) {
        errf(why, "the observation has %zd values, the observation_space %d", count, n);
        rc = ENV_EXT_FAIL_OBS;
    }
    for (int i = 0; rc == 0 && i < n; i++) {
        const char *p = (const char *)v.buf;
        float x = kind == OBS_F32 ? ((const float *)p)[i]
                : kind == OBS_F64 ? (float)((const double *)p)[i]
                : kind == OBS_U8  ? (float)((const unsigned char *)p)[i]
                                  : (float)(((const unsigned char *)p)[i] != 0);
        if (!isfinite(x)) {
            errf(why, "observation value %d is %g (not finite)", i, (double)x);
            rc = ENV_EXT_FAIL_OBS_FINITE;
        }
        out[i] = x;
    }
    PyBuffer_Release(&v);
    return rc;
}

/* Make one instance of h's environment (a new reference, or NULL with err). */
static PyObject *make_instance(const PyEnvHost *h, char *err) {
    PyObject *env = PyObject_Call(h->factory, h->args, h->kwargs);
    if (!env) py_fail(h->name, h->spec.ext_hooks ? "making an instance" : "the environment's constructor", err);
    return env;
}

/* ---- the hooks (EnvExtern) and the spec's functions ------------------- */

static void slot_close(Env *e) {
    Slot *s = e->ext;
    if (!s) return;
    Py_XDECREF(s->reset);
    Py_XDECREF(s->step);
    Py_XDECREF(s->env);
    free(s->obs);
    free(s);
    e->ext = NULL;
}

static int slot_open(Env *e, char *err) {
    PyEnvHost *h = host_of(e);
    Slot *s = xcalloc(1, sizeof *s);
    e->ext = s;
    s->obs = xcalloc((size_t)h->spec.obs_dim, sizeof(float));
    long n = 0;
    s->env = make_instance(h, err);
    if (!s->env || read_actions(h->name, s->env, &n, err) != 0) goto fail;
    if (n != h->spec.num_actions) {
        errf(err, "env %s: an instance has %ld actions, the first had %d", h->name, n, h->spec.num_actions);
        goto fail;
    }
    s->reset = PyObject_GetAttrString(s->env, "reset");
    s->step = s->reset ? PyObject_GetAttrString(s->env, "step") : NULL;
    if (!s->step) {
        py_fail(h->name, "looking up reset and step", err);
        goto fail;
    }
    return 0;
fail:
    slot_close(e);
    return -1;
}

static void slot_reseed(Env *e) { ((Slot *)e->ext)->seeded = false; }

static EnvExtFailure slot_failure(const Env *e, char *why) {
    const Slot *s = e->ext;
    snprintf(why, ERR_LEN, "%s", s->fail_why);
    return s->fail_kind;
}

static const EnvExtern pyenv_hooks = {
    .open = slot_open, .close = slot_close, .reseed = slot_reseed, .failure = slot_failure};

/* obs from a (obs, ...) tuple r of at least n items into the slot. */
static int take_obs(Env *e, PyObject *r, Py_ssize_t n, const char *what) {
    char why[ERR_LEN];
    if (!PyTuple_Check(r) || PyTuple_Size(r) != n) {
        snprintf(why, sizeof why, "returned a %s, expected a tuple of %zd", type_name(r), n);
        slot_fail(e, ENV_EXT_FAIL_CALL, what, why);
        return -1;
    }
    int kind = copy_obs(host_of(e), PyTuple_GetItem(r, 0), ((Slot *)e->ext)->obs, why);
    if (kind != 0) {
        slot_fail(e, (EnvExtFailure)kind, what, why);
        return -1;
    }
    return 0;
}

/* The (obs, info) a reset returned, or its failure (r NULL: an exception). */
static void took_reset(Env *e, PyObject *r) {
    if (!r) {
        slot_raised(e, "reset");
        return;
    }
    take_obs(e, r, 2, "reset");
    Py_DECREF(r);
}

/* reset(seed=...) on the instance's first reset, reset() after, with
 * options= when given (a new reference, or NULL). */
static void reset_with(Env *e, PyObject *options) {
    Slot *s = e->ext;
    if (e->failed) return;
    PyObject *kw = PyDict_New();
    if (kw && !s->seeded) {
        PyObject *seed = PyLong_FromUnsignedLongLong((unsigned long long)(rng_next(&e->rng) >> 1));
        if (!seed || PyDict_SetItemString(kw, "seed", seed) != 0) Py_CLEAR(kw);
        Py_XDECREF(seed);
        s->seeded = true;
    }
    if (kw && options && PyDict_SetItemString(kw, "options", options) != 0) Py_CLEAR(kw);
    PyObject *no_args = kw ? PyTuple_New(0) : NULL;
    PyObject *r = no_args ? PyObject_Call(s->reset, no_args, kw) : NULL;
    Py_XDECREF(no_args);
    Py_XDECREF(kw);
    took_reset(e, r);
}

int pyenv_reset_to(Env *e, const double *values, int n, float *obs) {
    PyObject *list = PyList_New(n), *opt = list ? PyDict_New() : NULL;
    for (int i = 0; opt && i < n; i++) PyList_SET_ITEM(list, i, PyFloat_FromDouble(values[i]));
    if (opt && PyDict_SetItemString(opt, "state", list) != 0) Py_CLEAR(opt);
    if (!opt) PyErr_Clear();
    if (opt) reset_with(e, opt);
    else slot_fail(e, ENV_EXT_FAIL_CALL, "reset", "could not build options={\"state\": [...]}");
    Py_XDECREF(opt);
    Py_XDECREF(list);
    e->t = 0;
    e->terminated = false;
    memcpy(obs, ((Slot *)e->ext)->obs, (size_t)e->spec->obs_dim * sizeof(float));
    return e->failed ? -1 : 0;
}

/* reset(seed=...) on the instance's first reset, reset() after. The seed
 * is drawn then from the slot's generator (non-negative: from the run seed
 * and the slot; after a resume, from the generator the checkpoint saved,
 * so a resumed run does not replay its first episodes). */
static void py_reset_state(Env *e) {
    Slot *s = e->ext;
    if (e->failed) return;
    PyObject *kw = NULL;
    if (!s->seeded) {
        kw = Py_BuildValue("{s:K}", "seed", (unsigned long long)(rng_next(&e->rng) >> 1));
        s->seeded = true;
    }
    PyObject *no_args = kw ? PyTuple_New(0) : NULL;
    PyObject *r = kw && no_args ? PyObject_Call(s->reset, no_args, kw) : kw ? NULL : PyObject_CallNoArgs(s->reset);
    Py_XDECREF(no_args);
    Py_XDECREF(kw);
    took_reset(e, r);
}

static EnvStep py_dynamics(Env *e, int action) {
    Slot *s = e->ext;
    EnvStep st = {0};
    if (e->failed) return st;
    PyObject *a = PyLong_FromLong(action);
    PyObject *r = a ? PyObject_CallOneArg(s->step, a) : NULL;
    Py_XDECREF(a);
    if (!r) {
        slot_raised(e, "step");
        return st;
    }
    if (take_obs(e, r, 5, "step") == 0) {
        st.reward = PyFloat_AsDouble(PyTuple_GetItem(r, 1));
        int term = PyObject_IsTrue(PyTuple_GetItem(r, 2)), trunc = PyObject_IsTrue(PyTuple_GetItem(r, 3));
        if (PyErr_Occurred() || term < 0 || trunc < 0) {
            slot_raised(e, "step's reward, terminated or truncated");
        } else if (!isfinite(st.reward)) {
            char why[64];
            snprintf(why, sizeof why, "the reward is %g (not finite)", st.reward);
            slot_fail(e, ENV_EXT_FAIL_REWARD, "step", why);
        }
        st.terminated = term > 0;
        st.truncated = trunc > 0;
    }
    Py_DECREF(r);
    if (e->failed) st = (EnvStep){0};
    return st;
}

static void py_observe(const Env *e, float *obs) {
    const Slot *s = e->ext;
    memcpy(obs, s->obs, (size_t)e->spec->obs_dim * sizeof(float));
}

/* ---- open and close --------------------------------------------------- */

/* h->factory and h->args from the name; h->kwargs from kwargs_json. */
static int load_factory(PyEnvHost *h, const char *kwargs_json, char *err) {
    const char *name = h->name;
    if (env_extern_kind(name) == ENV_EXT_GYMNASIUM) {
        PyObject *gym = PyImport_ImportModule("gymnasium");
        if (!gym) return py_fail(name, "import gymnasium", err);
        h->factory = PyObject_GetAttrString(gym, "make");
        Py_DECREF(gym);
        if (!h->factory) return py_fail(name, "gymnasium.make lookup", err);
        h->args = Py_BuildValue("(s)", name + 10);
    } else {
        char mod[PYENV_NAME_LEN];
        const char *colon = strchr(name + 7, ':');
        snprintf(mod, sizeof mod, "%.*s", (int)(colon - (name + 7)), name + 7);
        PyObject *obj = PyImport_ImportModule(mod);
        if (!obj) return py_fail(name, "import", err);
        char attr[PYENV_NAME_LEN];
        snprintf(attr, sizeof attr, "%s", colon + 1);
        for (char *tok = strtok(attr, "."); tok && obj; tok = strtok(NULL, ".")) {
            PyObject *next = PyObject_GetAttrString(obj, tok);
            Py_DECREF(obj);
            obj = next;
        }
        if (!obj) return py_fail(name, "looking up the callable", err);
        h->factory = obj;
        if (!PyCallable_Check(obj)) return errf(err, "env %s: %s is a %s, not callable", name, colon + 1, type_name(obj));
        h->args = PyTuple_New(0);
    }
    const char *text = kwargs_json && *kwargs_json ? kwargs_json : "{}";
    PyObject *json = PyImport_ImportModule("json");
    PyObject *d = json ? PyObject_CallMethod(json, "loads", "s", text) : NULL;
    Py_XDECREF(json);
    if (!d) return py_fail(name, "env.kwargs (JSON)", err);
    h->kwargs = d;
    if (!PyDict_Check(d)) return errf(err, "env %s: env.kwargs is a JSON %s, expected an object", name, type_name(d));
    return h->args ? 0 : py_fail(name, "building the arguments", err);
}

/* The probe: one instance's spaces into h->spec, one reset checked. */
static int probe(PyEnvHost *h, char *err) {
    PyObject *env = make_instance(h, err);
    if (!env) return -1;
    long n = 0;
    int rc = read_actions(h->name, env, &n, err);
    if (rc == 0) rc = read_obs_space(h, env, err);
    PyObject *spec = rc == 0 ? PyObject_GetAttrString(env, "spec") : NULL;
    PyObject *thr = spec && spec != Py_None ? PyObject_GetAttrString(spec, "reward_threshold") : NULL;
    PyErr_Clear();
    h->spec.reward_threshold = thr && PyNumber_Check(thr) ? PyFloat_AsDouble(thr) : ENV_NO_THRESHOLD;
    if (!isfinite(h->spec.reward_threshold)) h->spec.reward_threshold = ENV_NO_THRESHOLD;
    PyErr_Clear();
    Py_XDECREF(thr);
    Py_XDECREF(spec);
    h->spec.num_actions = (int)n;
    if (rc == 0) { /* the first reset's observation against the space */
        PyObject *r = PyObject_CallMethod(env, "reset", NULL);
        float *obs = xcalloc((size_t)h->spec.obs_dim, sizeof(float));
        char why[ERR_LEN];
        if (!r) rc = py_fail(h->name, "reset", err);
        else if (!PyTuple_Check(r) || PyTuple_Size(r) != 2)
            rc = errf(err, "env %s: reset returned a %s, expected a tuple (obs, info)", h->name, type_name(r));
        else if (copy_obs(h, PyTuple_GetItem(r, 0), obs, why) != 0)
            rc = errf(err, "env %s: reset: %s", h->name, why);
        Py_XDECREF(r);
        free(obs);
    }
    Py_DECREF(env);
    return rc;
}

bool pyenv_available(void) { return true; }

int pyenv_open(PyEnvHost *h, const char *name, const char *kwargs_json, char *err) {
    memset(h, 0, sizeof *h);
    if (env_extern_check(name, err) != 0) return -1;
    if (strlen(name) >= sizeof h->name) return errf(err, "env %.40s...: id longer than %d bytes", name, PYENV_NAME_LEN - 1);
    snprintf(h->name, sizeof h->name, "%s", name);
    if (!Py_IsInitialized()) {
        Py_InitializeEx(0); /* no signal handlers: MPI's and ours stay */
        h->started = true;
    }
    h->spec.name = h->name;
    int rc = load_factory(h, kwargs_json, err);
    if (rc == 0) rc = probe(h, err);
    h->spec.reset_state = py_reset_state;
    h->spec.dynamics = py_dynamics;
    h->spec.observe = py_observe;
    h->spec.ext_hooks = &pyenv_hooks;
    h->spec.host = h;
    if (rc == 0) rc = env_spec_check(&h->spec, err);
    if (rc != 0) pyenv_close(h);
    return rc;
}

void pyenv_close(PyEnvHost *h) {
    if (!h->spec.name) return;
    Py_XDECREF((PyObject *)h->factory);
    Py_XDECREF((PyObject *)h->args);
    Py_XDECREF((PyObject *)h->kwargs);
    free(h->bounds);
    fflush(stdout);
    if (h->started) Py_FinalizeEx();
    memset(h, 0, sizeof *h);
}
