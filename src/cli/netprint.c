/* SPDX-License-Identifier: MIT */
/* netprint.c: see netprint.h. */
#include "netprint.h"

#include <stdbool.h>

void netprint_layers(const QNet *net, FILE *f) {
    const QNetSpec *s = &net->spec;
    fprintf(f, "network: %zu parameters\n", net->n_params);
    if (s->n_conv > 0) fprintf(f, "  %-9s %dx%dx%d planes (height x width x channels)\n", "input", s->in_h, s->in_w, s->in_c);
    else fprintf(f, "  %-9s %d numbers\n", "input", s->obs_dim);
    for (int i = 0; i < net->n_conv; i++) {
        const ConvLayer *c = &net->conv[i];
        char name[24], shape[96];
        snprintf(name, sizeof name, "conv.%d", i);
        snprintf(shape, sizeof shape, "%dx%dx%d (%d filters %dx%d, stride %d)", c->out_c, c->out_h, c->out_w, c->out_c,
                 c->k, c->k, c->stride);
        size_t n = (size_t)c->out_c * (size_t)c->in_c * (size_t)c->k * (size_t)c->k + (size_t)c->out_c;
        fprintf(f, "  %-9s %-40s %10zu parameters\n", name, shape, n);
    }
    for (int l = 0; l < net->n_linear; l++) {
        const QNetLinear *L = &net->lin[l];
        char name[24], shape[96];
        bool head = l == net->n_linear - 1;
        if (head) snprintf(name, sizeof name, "head");
        else snprintf(name, sizeof name, "hidden.%d", l);
        snprintf(shape, sizeof shape, "%d (from %d)%s", L->out, L->in, head && s->dueling ? " dueling" : "");
        fprintf(f, "  %-9s %-40s %10zu parameters\n", name, shape, (size_t)L->in * (size_t)L->out + (size_t)L->out);
    }
}

/* "4-16-2", or "4-8-8-2 dueling": observation, hidden widths, actions;
 * with conv layers the observation is its planes and each conv layer
 * follows as cFkKsS: "10x10x4-c16k3s1-128-6". */
void netprint_name(const QNetSpec *s, char *out, size_t size) {
    size_t n = s->n_conv ? (size_t)snprintf(out, size, "%dx%dx%d", s->in_h, s->in_w, s->in_c)
                         : (size_t)snprintf(out, size, "%d", s->obs_dim);
    for (int i = 0; i < s->n_conv && n < size; i++)
        n += (size_t)snprintf(out + n, size - n, "-c%dk%ds%d", s->conv[i].filters, s->conv[i].kernel,
                              s->conv[i].stride);
    for (int l = 0; l < s->n_hidden && n < size; l++) n += (size_t)snprintf(out + n, size - n, "-%d", s->hidden[l]);
    if (n < size) snprintf(out + n, size - n, "-%d%s", s->n_actions, s->dueling ? " dueling" : "");
}
