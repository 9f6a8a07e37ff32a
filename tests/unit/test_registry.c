/* gs_registry_add: families added at start-up (plugins), refused when a
 * name is taken, the table incomplete, or the registry full; then the
 * candidates, the allow-list and GEMMSHIM_KERNELS see them. */
#include "gs_config.h"
#include "gs_registry.h"
#include "gs_test.h"

#include <stdio.h>

static int no(const gs_class_t *p, const gs_device_t *d, int c)
{
    (void)p, (void)d, (void)c;
    return 0;
}

static void plan(const gs_problem_t *p, const gs_device_t *d, gs_plan_t *pl)
{
    (void)p, (void)d, (void)pl;
}

static int run(const gs_plan_t *pl, const gs_problem_t *p, const gs_device_t *d)
{
    (void)pl, (void)p, (void)d;
    return 1;
}

/* configuration names for the families below: names[family][config] */
static char names[GS_REGISTRY_MAX + 1][GS_CANDIDATES_MAX][32];
#define NAMES(i) static const char *name_##i(int c) { return names[i][c]; }
NAMES(0) NAMES(1) NAMES(2) NAMES(3) NAMES(4) NAMES(5) NAMES(6) NAMES(7) NAMES(8) NAMES(9)
NAMES(10) NAMES(11) NAMES(12) NAMES(13) NAMES(14) NAMES(15) NAMES(16)
static const char *(*const name_fn[])(int) = {
    name_0, name_1, name_2, name_3, name_4, name_5, name_6, name_7, name_8,
    name_9, name_10, name_11, name_12, name_13, name_14, name_15, name_16};

/* family i named `name`, its configurations named by `fmt` (%d: the index) */
static gs_family_t family(int i, const char *name, int n_configs, const char *fmt)
{
    for (int c = 0; c < n_configs; ++c)
        snprintf(names[i][c], sizeof names[i][c], fmt, c);
    gs_family_t f = {.name = name, .n_configs = n_configs, .config_name = name_fn[i],
                     .can_implement = no, .plan = plan, .run = run};
    return f;
}

static gs_family_t fams[GS_REGISTRY_MAX + 1];
static char fam_names[GS_REGISTRY_MAX + 1][16];

static int add(const gs_family_t *f, char *msg)
{
    return gs_registry_add(f, msg, 256);
}

int main(void)
{
    char msg[256];
    const int builtin = gs_family_count(), builtin_candidates = gs_candidate_count();
    CHECK(builtin >= 1);

    /* refused: a built-in family's name, a built-in configuration's name as
     * a family or a configuration, a configuration named after a built-in
     * family, a name twice, an incomplete table */
    const gs_family_t *pp = gs_family_at(1);
    fams[0] = family(0, pp->name, 1, "%dx");
    snprintf(names[0][0], sizeof names[0][0], "mine");
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    char want[128];
    snprintf(want, sizeof want, "name '%s' is taken by family '%s'", pp->name, pp->name);
    CHECK_STR_EQ(msg, want);
    fams[0] = family(0, "mine", 1, "x");
    snprintf(names[0][0], sizeof names[0][0], "%s", pp->config_name(0));
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    snprintf(want, sizeof want, "name '%s' is taken by family '%s'", pp->config_name(0), pp->name);
    CHECK_STR_EQ(msg, want);
    fams[0] = family(0, "mine", 1, "x");
    snprintf(names[0][0], sizeof names[0][0], "%s", gs_family_at(0)->name);
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    fams[0] = family(0, pp->config_name(0), 1, "x");
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    fams[0] = family(0, "mine", 2, "mine_same");
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    CHECK_STR_EQ(msg, "family 'mine': configuration name 'mine_same' given twice");
    fams[0] = family(0, "mine", 1, "mine");
    fams[0].run = NULL;
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    CHECK_STR_EQ(msg, "family table incomplete");
    CHECK_EQ_INT(gs_family_count(), builtin);

    /* too many configurations for the allow-list's 64 bits */
    fams[0] = family(0, "wide", GS_CANDIDATES_MAX - builtin_candidates + 1, "wide_%d");
    CHECK_EQ_INT(add(&fams[0], msg), -1);
    CHECK(strstr(msg, "too many configurations") != NULL);

    /* accepted: a one-configuration family may repeat its own name */
    fams[0] = family(0, "mine", 1, "mine");
    CHECK_EQ_INT(add(&fams[0], msg), 0);
    CHECK_STR_EQ(msg, "");
    CHECK_EQ_INT(gs_family_count(), builtin + 1);
    CHECK(gs_family_find("mine") == &fams[0]);
    const int cand = gs_candidate_find("mine");
    CHECK_EQ_INT(cand, builtin_candidates);
    CHECK(gs_candidates_of_family(&fams[0]) == 1ull << cand);
    CHECK(gs_candidates_all() >> cand & 1);
    /* GEMMSHIM_KERNELS names it; a second family of that name is refused */
    gs_routing_t r = {.mode = GS_MODE_ON, .policy = GS_POLICY_TABLE, .allowed = 0, .tune = GS_TUNE_OFF};
    CHECK_EQ_INT(gs_parse_kernel_list(&r, "mine", msg, sizeof msg), 0);
    CHECK(r.allowed == 1ull << cand);
    char list[128];
    gs_format_kernel_list(&r, list, sizeof list);
    CHECK_STR_EQ(list, "mine");
    fams[1] = family(1, "mine", 1, "mine_other");
    CHECK_EQ_INT(add(&fams[1], msg), -1);
    CHECK_STR_EQ(msg, "name 'mine' is taken by family 'mine'");

    /* fill the registry: the one past its limit is refused */
    int added = 1;
    for (int i = 1; i <= GS_REGISTRY_MAX; ++i) {
        snprintf(fam_names[i], sizeof fam_names[i], "extra%d", i);
        fams[i] = family(i, fam_names[i], 1, fam_names[i]);
        snprintf(names[i][0], sizeof names[i][0], "%s", fam_names[i]);
        const int rc = add(&fams[i], msg);
        if (builtin + added < GS_REGISTRY_MAX) {
            CHECK_EQ_INT(rc, 0);
            added += rc == 0;
        } else {
            CHECK_EQ_INT(rc, -1);
            snprintf(want, sizeof want, "registry full (%d families)", GS_REGISTRY_MAX);
            CHECK_STR_EQ(msg, want);
        }
    }
    CHECK_EQ_INT(gs_family_count(), GS_REGISTRY_MAX);

    gs_registry_reset();
    CHECK_EQ_INT(gs_family_count(), builtin);
    CHECK_EQ_INT(gs_candidate_count(), builtin_candidates);
    CHECK(gs_family_find("mine") == NULL);
    return GS_TEST_DONE();
}
