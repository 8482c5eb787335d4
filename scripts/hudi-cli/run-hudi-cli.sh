#!/usr/bin/env bash
# Run one hudi-cli command file non-interactively against one table.
#
#   run-hudi-cli.sh [--emr | --local] [--dry-run] --path TABLE_URI COMMAND_FILE
#
# The command file's @TABLE_PATH@ is replaced by TABLE_URI (in a temporary copy), then:
#   --emr   (on the EMR master node) the hudi-cli EMR installs, with the file:
#           Hudi 0.x hudi-cli.sh (Spring Shell 1):  hudi-cli.sh --cmdfile FILE
#           Hudi 1.x hudi-cli-with-bundle.sh (Spring Shell 2):  hudi-cli-with-bundle.sh @FILE
#           Override the launcher with HUDI_CLI=/path/to/hudi-cli[-with-bundle].sh.
#   --local (default) a hudi-cli bundle from Maven Central on this machine:
#           java -cp <conf>:$SPARK_HOME/jars/*:HUDI_CLI_BUNDLE_JAR:HUDI_SPARK_BUNDLE_JAR org.apache.hudi.cli.Main @FILE
#           HUDI_CLI_BUNDLE_JAR   org.apache.hudi:hudi-cli-bundle_2.12:<version> jar (required)
#           HUDI_SPARK_BUNDLE_JAR default: ~/.cache/hudi-cdc/jars/hudi-spark3.5-bundle_2.12-1.2.0.jar
#           SPARK_HOME            default: the pyspark package's directory
#   --dry-run prints the rendered command file and the command, and runs nothing.
set -euo pipefail

mode=local dry_run=0 table_path="" cmd_file=""
usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --emr) mode=emr ;;
    --local) mode=local ;;
    --dry-run) dry_run=1 ;;
    --path) shift; table_path="${1:-}" ;;
    --path=*) table_path="${1#--path=}" ;;
    -h|--help) usage ;;
    -*) echo "error: unknown option $1" >&2; exit 2 ;;
    *) cmd_file="$1" ;;
  esac
  shift
done
[ -n "$table_path" ] || { echo "error: --path TABLE_URI is required" >&2; exit 2; }
[ -n "$cmd_file" ] || { echo "error: a command file is required (e.g. $(dirname "$0")/commits-show.txt)" >&2; exit 2; }
[ -f "$cmd_file" ] || { echo "error: command file not found: $cmd_file" >&2; exit 2; }

rendered="$(mktemp "${TMPDIR:-/tmp}/hudi-cli-XXXXXX.txt")"
trap 'rm -f "$rendered"' EXIT
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in "//"*|"") continue ;; esac  # comments and blank lines stay out of hudi-cli's input
  printf '%s\n' "${line//@TABLE_PATH@/$table_path}"
done < "$cmd_file" > "$rendered"

if [ "$mode" = emr ]; then
  launcher="${HUDI_CLI:-}"
  if [ -z "$launcher" ]; then
    for candidate in /usr/lib/hudi/cli/bin/hudi-cli-with-bundle.sh /usr/lib/hudi/cli/bin/hudi-cli.sh; do
      if [ -x "$candidate" ]; then launcher="$candidate"; break; fi
    done
  fi
  [ -n "$launcher" ] || { echo "error: no hudi-cli on this node (/usr/lib/hudi/cli/bin); set HUDI_CLI" >&2; exit 5; }
  case "$(basename "$launcher")" in
    *with-bundle*) argv=("$launcher" "@$rendered") ;;
    *) argv=("$launcher" --cmdfile "$rendered") ;;
  esac
else
  cli_jar="${HUDI_CLI_BUNDLE_JAR:-}"
  spark_jar="${HUDI_SPARK_BUNDLE_JAR:-$HOME/.cache/hudi-cdc/jars/hudi-spark3.5-bundle_2.12-1.2.0.jar}"
  spark_home="${SPARK_HOME:-$(python3 -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))' 2>/dev/null || true)}"
  if [ -z "$cli_jar" ] || [ ! -f "$cli_jar" ]; then
    echo "error: HUDI_CLI_BUNDLE_JAR must name a hudi-cli-bundle_2.12 jar (org.apache.hudi:hudi-cli-bundle_2.12 on Maven Central)" >&2
    [ "$dry_run" = 1 ] || exit 5
  fi
  [ -f "$spark_jar" ] || { echo "error: Hudi Spark bundle not found: $spark_jar (set HUDI_SPARK_BUNDLE_JAR)" >&2; [ "$dry_run" = 1 ] || exit 5; }
  conf_dir="$(mktemp -d "${TMPDIR:-/tmp}/hudi-cli-conf-XXXXXX")"
  trap 'rm -f "$rendered"; rm -rf "$conf_dir"' EXIT
  argv=(java -cp "$conf_dir:$spark_home/jars/*:${cli_jar:-HUDI_CLI_BUNDLE_JAR}:$spark_jar"
        "-DSPARK_CONF_DIR=${SPARK_CONF_DIR:-}" "-DHADOOP_CONF_DIR=${HADOOP_CONF_DIR:-}"
        org.apache.hudi.cli.Main "@$rendered")
fi

if [ "$dry_run" = 1 ]; then
  echo "# command file:"; cat "$rendered"
  echo "# command:"; printf '%q ' "${argv[@]}"; echo
  exit 0
fi
"${argv[@]}"
