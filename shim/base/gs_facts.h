/* What a measurement on this machine depends on besides the call: the GPU,
 * the driver, cuBLAS and cuBLASLt, the shim's build. The tune cache's
 * validator starts with them (shim/tune/gs_tune.c), and the signature file of
 * `gemmshim record` names them (shim/observe/gs_record_out.c), so a file from
 * another machine or build is recognised as one. */
#ifndef GS_FACTS_H
#define GS_FACTS_H

#include "gs_problem.h"

#include <stddef.h>

/* "gpu=H100<sep>sms=132<sep>cc=90<sep>driver=..<sep>cublas=..<sep>cublaslt=..
 * <sep>shim=VERSION/BUILD_ID" for device d, into buf (size bytes). */
void gs_facts(const gs_device_t *d, char sep, char *buf, size_t size);

#endif
