/* The GEMMSHIM_MODE=ab report: a table in the log (else on stderr) and, with
 * GEMMSHIM_REPORT=PREFIX, PREFIX.csv and PREFIX.json, one pair per process
 * (several processes of one run would break each other's headers by
 * appending, or lose a report by overwriting):
 *   - "%p" in PREFIX becomes the process id ("%%" a "%"): the files are that
 *     process's, written over if they exist;
 *   - otherwise PREFIX.csv is created only if it does not exist (O_EXCL);
 *     if it does (another process's report of this run, or one left from an
 *     earlier run: the launcher removes those first), this process writes
 *     PREFIX.<pid>.csv and PREFIX.<pid>.json and says so in the table.
 * bench/merge_reports.py merges PREFIX.csv and PREFIX.*.csv into one. */
#ifndef GS_REPORT_H
#define GS_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "gs_log.h"

/* Create the report's two files for process pid, named as above. 0 with
 * both open (their path without ".csv"/".json" in base, of size bytes;
 * *fell_back = 1 when PREFIX.csv existed and PREFIX.<pid> was taken), -1
 * with neither (errno says why). */
int gs_report_create(const char *prefix, long pid, FILE **csv, FILE **json, char *base,
                     size_t size, int *fell_back);

/* Write rows: the table as one block (to the log, else stderr) and, with
 * a prefix, the files. csv_path (may be NULL) gets the CSV file's path, ""
 * when none. 0, or -1 when the files could not be written (said). */
int gs_report_write(const char *prefix, long pid, const gs_ab_row_t *rows, size_t n,
                    char *csv_path, size_t size);

#endif
