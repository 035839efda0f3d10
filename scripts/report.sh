#!/usr/bin/env bash
# The README's main command: set up what is missing, build and install compresslab, start a
# throwaway cluster, run the report, write it to results/report.md, print it, stop the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
source scripts/cluster.sh
install_extension
cluster_start report
mkdir -p results
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION compresslab" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -P footer=off -f scripts/report.sql --pset=format=aligned >results/report.txt
{
  echo "# compresslab report"
  echo
  echo '```'
  cat results/report.txt
  echo '```'
} >results/report.md
cat results/report.txt
echo "report: written to results/report.md"
