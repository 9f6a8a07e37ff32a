/* Regressions found by the libFuzzer targets (tests/fuzz), one check each,
 * outside the files whose other tests they would touch. Their reproducers
 * are also in tests/fuzz/corpus/, replayed by the fuzz_*_replay tests. */
#include "gs_config.h"
#include "gs_test.h"

#include <stdlib.h>

static const char *test_device_value;

static const char *env_test_device(const char *name)
{
    return !strcmp(name, "GEMMSHIM_TEST_DEVICE") ? test_device_value : NULL;
}

/* fuzz_config: GEMMSHIM_TEST_DEVICE=sm_80:42949672962 was read by sscanf's
 * %d, which truncated the SM count to 2 (and sm_4294967386 to sm_90): a
 * value out of range was accepted as another, in range. */
static void test_device_overflow(void)
{
    static const char *const bad[] = {
        "sm_80:42949672962", "sm_4294967386:132", "sm_90:4294967297",
        "sm_90:9223372036854775808", "sm_18446744073709551706:132", "sm_90:-4294967295",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        gs_config_t c;
        test_device_value = bad[i];
        CHECK_EQ_INT(gs_config_parse(&c, env_test_device), -1);
        CHECK_EQ_INT(c.test_device, 0);
        CHECK_CONTAINS(c.error_msg, "GEMMSHIM_TEST_DEVICE");
    }
    /* the forms that were accepted still are, with their values (but blanks
     * inside the value: refused since values are taken as written,
     * test_config's values_as_written) */
    static const struct {
        const char *v;
        int major, minor, sms;
    } good[] = {
        {"sm_90:132", 9, 0, 132}, {"sm_10:1", 1, 0, 1}, {"sm_199:4096", 19, 9, 4096},
        {"sm_+90:+132", 9, 0, 132}, {"sm_090:0132", 9, 0, 132},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i) {
        gs_config_t c;
        test_device_value = good[i].v;
        CHECK_EQ_INT(gs_config_parse(&c, env_test_device), 0);
        CHECK_EQ_INT(c.test_device, 1);
        CHECK_EQ_INT(c.test_dev.cc_major, good[i].major);
        CHECK_EQ_INT(c.test_dev.cc_minor, good[i].minor);
        CHECK_EQ_INT(c.test_dev.sm_count, good[i].sms);
    }
}

int main(void)
{
    test_device_overflow();
    return GS_TEST_DONE();
}
