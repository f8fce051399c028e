/* Command line: coopsolve [options] INPUT. Errors are COOP_ERR_INPUT naming
 * the option. */
#ifndef COOP_CLI_H
#define COOP_CLI_H

#include <stdio.h>

#define COOP_CLI_MAX_SETS 256

typedef struct {
  const char *input;
  const char *sets[COOP_CLI_MAX_SETS]; /* "section.key=value", in order given */
  int nsets;
  int dry_run, help, version;
} coop_cli;

/* --output, --backend and --device become sets of output.file, run.backend and
 * run.device, in the order given with the --set options. Strings point into
 * argv or static storage owned by cli. */
int coop_cli_parse(coop_cli *cli, int argc, char **argv, char *scratch, size_t scratch_len);
void coop_cli_usage(FILE *out);

#endif
