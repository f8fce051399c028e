#include "driver/cli.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

void coop_cli_usage(FILE *out) {
  fputs("usage: coopsolve [options] INPUT\n"
        "\n"
        "Solve the problem described by the input file INPUT and write an HDF5 file.\n"
        "Run it under mpirun: each rank drives one GPU (or the CPU on the host backend).\n"
        "\n"
        "options:\n"
        "  --set SECTION.KEY=VALUE  override a key of the input file (repeatable, later wins)\n"
        "  --output FILE            HDF5 output file (same as --set output.file=FILE)\n"
        "  --restart FILE           go on from a checkpoint of this problem (same as\n"
        "                           --set run.restart=FILE)\n"
        "  --backend host|cuda      where the solver runs (same as --set run.backend=...)\n"
        "  --device N               GPU index for every rank (same as --set run.device=N)\n"
        "  --dry-run                print the resolved configuration, decomposition and memory\n"
        "                           per rank, then exit without solving\n"
        "  --help                   print this help and the input key reference\n"
        "  --help-all               the same with the [tune] keys (kernel internals)\n"
        "  --help-keys=markdown     the whole key reference as Markdown (docs/keys.md)\n"
        "  --version                print the version and build configuration\n"
        "\n"
        "exit status: 0 success, 1 run-time failure, 2 bad input or options, 3 stopped by a\n"
        "signal after a checkpoint, 4 not converged with solver.error_if_not_converged\n",
        out);
}

/* Append "key=value" built from an option to scratch; returns it or NULL. */
static const char *make_set(char **scratch, size_t *left, const char *key, const char *value) {
  const int n = snprintf(*scratch, *left, "%s=%s", key, value);
  if (n < 0 || (size_t)n >= *left) return NULL;
  const char *s = *scratch;
  *scratch += n + 1;
  *left -= (size_t)n + 1;
  return s;
}

static int add_set(coop_cli *cli, const char *opt, const char *set) {
  if (!set) return coop_error_input("option %s: value too long", opt);
  if (cli->nsets == COOP_CLI_MAX_SETS)
    return coop_error_input("option %s: more than %d overrides", opt, COOP_CLI_MAX_SETS);
  cli->sets[cli->nsets++] = set;
  return 0;
}

/* Value of an option given as "--opt VALUE" or "--opt=VALUE". */
static int option_value(int argc, char **argv, int *i, const char *name, const char **value) {
  const size_t len = strlen(name);
  const char *arg = argv[*i];
  if (arg[len] == '=') {
    *value = arg + len + 1;
  } else if (*i + 1 < argc) {
    *value = argv[++*i];
  } else {
    return coop_error_input("option %s needs a value", name);
  }
  if (!**value) return coop_error_input("option %s needs a value", name);
  return 0;
}

static int is_option(const char *arg, const char *name) {
  const size_t len = strlen(name);
  return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

static int valued_option(coop_cli *cli, int argc, char **argv, int *i, char **scratch,
                         size_t *left) {
  static const char *const names[] = {"--set", "--output", "--backend", "--device", "--restart"};
  static const char *const keys[] = {NULL, "output.file", "run.backend", "run.device", "run.restart"};
  for (int o = 0; o < 5; o++) {
    if (!is_option(argv[*i], names[o])) continue;
    const char *v = NULL;
    COOP_CHECK(option_value(argc, argv, i, names[o], &v));
    if (o == 2 && strcmp(v, "host") && strcmp(v, "cuda"))
      return coop_error_input("option --backend %s: expected host or cuda", v);
    if (o == 3) {
      char *end;
      const long d = strtol(v, &end, 10);
      if (*end || d < 0 || d > 4096)
        return coop_error_input("option --device %s: expected a GPU index 0..4096", v);
    }
    return add_set(cli, names[o], o == 0 ? v : make_set(scratch, left, keys[o], v));
  }
  return coop_error_input("unknown option '%s' (see coopsolve --help)", argv[*i]);
}

int coop_cli_parse(coop_cli *cli, int argc, char **argv, char *scratch, size_t scratch_len) {
  memset(cli, 0, sizeof *cli);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { /* help levels: driver/app.c */
      cli->help = cli->help > 1 ? cli->help : 1;
    } else if (strcmp(a, "--help-all") == 0) {
      cli->help = cli->help > 2 ? cli->help : 2;
    } else if (strcmp(a, "--help-keys=markdown") == 0) {
      cli->help = 3;
    } else if (strcmp(a, "--version") == 0) {
      cli->version = 1;
    } else if (strcmp(a, "--dry-run") == 0) {
      cli->dry_run = 1;
    } else if (a[0] == '-' && a[1] != '\0') {
      COOP_CHECK(valued_option(cli, argc, argv, &i, &scratch, &scratch_len));
    } else if (cli->input) {
      return coop_error_input("more than one input file given ('%s' and '%s')", cli->input, a);
    } else {
      cli->input = a;
    }
  }
  if (!cli->input && !cli->help && !cli->version)
    return coop_error_input("no input file given (usage: coopsolve [options] INPUT)");
  return 0;
}
