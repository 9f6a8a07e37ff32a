/* The C control API's exported names (include/gemmshim.h), one list for the
 * export map (shim/face/exports.map.in) and the tests. */
#ifndef GS_API_NAMES_H
#define GS_API_NAMES_H

#define GS_API_FUNCS(XX) \
  XX(gemmshim_version) \
  XX(gemmshim_version_string) \
  XX(gemmshim_set_mode) \
  XX(gemmshim_get_mode) \
  XX(gemmshim_set_kernels) \
  XX(gemmshim_get_kernels) \
  XX(gemmshim_last_route) \
  XX(gemmshim_last_tuning) \
  XX(gemmshim_hold_prior) \
  XX(gemmshim_get_stats) \
  XX(gemmshim_get_resources) \
  XX(gemmshim_reset_stats) \
  XX(gemmshim_write_report) \
  XX(gemmshim_load_table)

#endif
