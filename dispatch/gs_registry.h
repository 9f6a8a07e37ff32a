/* The one list of kernel families (dispatch/gs_registry.c), and the
 * candidates it makes: every configuration of every family, numbered in the
 * list's order (the order of preference when nothing measured tells
 * candidates apart). Candidate numbers index the allow-list
 * (gs_routing_t.allowed) and the statistics; names key everything stored. */
#ifndef GS_REGISTRY_H
#define GS_REGISTRY_H

#include "gs_family.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { GS_CANDIDATES_MAX = 64 }; /* bits of gs_routing_t.allowed */
enum { GS_REGISTRY_MAX = 16 };    /* families, built-in and added */

/* Adds a family after the built-in ones (start-up only, before the first
 * call is served: cuBLASLt's algorithms, plugins). Refused, with one line
 * in msg, when its table lacks a required operation, its name or one of
 * its configuration names is already taken (as a family's or a
 * configuration's name, or twice in its own table), or the registry is
 * full. 0 or -1. */
int gs_registry_add(const gs_family_t *f, char *msg, size_t msg_size);
/* Back to the built-in families alone (tests). */
void gs_registry_reset(void);

int gs_family_count(void);
const gs_family_t *gs_family_at(int i);
/* by name; NULL when there is none */
const gs_family_t *gs_family_find(const char *name);

/* every configuration of every family */
int gs_candidate_count(void);
/* candidate i's family and configuration */
const gs_family_t *gs_candidate(int i, int *config);
/* the candidate number of a family's configuration, -1 if not registered */
int gs_candidate_of(const gs_family_t *f, int config);
/* a configuration's stable name */
const char *gs_candidate_name(int i);
/* by configuration name ("pingpong_128x128x64", or a one-configuration
 * family's name), -1 when there is none */
int gs_candidate_find(const char *config_name);
/* the allow-list bits of every candidate, and of one family's */
uint64_t gs_candidates_all(void);
uint64_t gs_candidates_of_family(const gs_family_t *f);

/* A configuration as text for p (the family's config_text, else its
 * name), and back (-1: none that runs p). */
const char *gs_family_config_text(const gs_family_t *f, const gs_problem_t *p,
                                  const gs_device_t *d, int config, char *buf, size_t size);
int gs_family_config_from_text(const gs_family_t *f, const gs_problem_t *p, const gs_device_t *d,
                               const char *text);

/* Every family's developer knobs, numbered in the list's order: knob i
 * is gs_knob_at(i, &family). Their values live in gs_config_t.knob_values. */
enum { GS_KNOBS_MAX = 32 };
int gs_knob_count(void);
const gs_knob_t *gs_knob_at(int i, const gs_family_t **family);
/* Hands each family its knobs' values (values[i] for knob i). */
void gs_knobs_apply(const int *values);

#ifdef __cplusplus
}
#endif
#endif /* GS_REGISTRY_H */
