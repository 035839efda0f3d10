#!/usr/bin/env bash
# The report on a DBA's own database (scripts/report.sh --dbname CONNINFO [--out DIR] calls
# this): needs psql and compresslab installed on that server, nothing else. Arguments: the
# connection string (or database name) and the output directory, which must not exist yet:
# everything is written into a temporary directory beside it, renamed to it at the end, so that
# a run that fails leaves nothing behind. REPORT_BUDGET (default '30 s') bounds the advisor.
set -euo pipefail
cd "$(dirname "$0")/.."
conninfo=$1 out=${2%/}
budget=${REPORT_BUDGET:-30 s}
started=$(date +%s)
command -v psql >/dev/null || { echo "report: psql is not on the PATH (Debian: apt-get install postgresql-client)" >&2; exit 3; }
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
# -d, not PGDATABASE: only a -d value may be a whole connection string. search_path pinned so
# that nothing of another role's runs as this one.
on_db() { PGOPTIONS="${PGOPTIONS:-} -c search_path=pg_catalog,pg_temp" psql -X -q -v ON_ERROR_STOP=1 -d "$conninfo" "$@"; }
older() { [[ "$1" != "$2" && "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" == "$1" ]]; }

IFS='|' read -r database role server installed available < <(on_db -At -c \
  "SELECT current_database(), current_user, current_setting('server_version'),
          coalesce((SELECT extversion FROM pg_extension WHERE extname = 'compresslab'), ''),
          coalesce((SELECT default_version FROM pg_available_extensions WHERE name = 'compresslab'), '')") ||
  { echo "report: could not connect with '$conninfo'" >&2; exit 3; }
if [[ -z "$available" ]] || older "$available" "$version"; then
  echo "report: this report needs compresslab $version installed on the server of $database" \
       "(found: ${available:-none}). Install it there (the release package compresslab-$version-pgN-x86_64.tar.gz," \
       "or cargo pgrx install --release --pg-config <that server's pg_config>), then run this again." >&2
  exit 3
fi
created="nothing but temporary tables"
if [[ -z "$installed" ]]; then
  on_db -c "CREATE EXTENSION compresslab" >/dev/null ||
    { echo "report: CREATE EXTENSION compresslab failed in $database: a role that may create it must run it once" >&2; exit 3; }
  created="the extension compresslab $version (schema compresslab; DROP EXTENSION compresslab removes it) and temporary tables"
elif older "$installed" "$version"; then
  echo "report: compresslab $installed is created in $database; this report needs $version:" \
       "ALTER EXTENSION compresslab UPDATE (as its owner), then run this again." >&2
  exit 3
fi

[[ ! -e "$out" ]] || { echo "report: $out exists already; name a new directory with --out" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "$out.partial.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "report: on $database as $role, PostgreSQL $server, compresslab $version; writing $out"
on_db -v budget="$budget" -v columns_chart="$work/columns.svg" -f scripts/report_advice.sql >"$work/advice.md"
on_db -v chart="$work/chart.svg" -f scripts/report_user.sql >"$work/body.md"
{
  echo "# compresslab report on $database"
  echo
  echo "As role \`$role\` on PostgreSQL $server with compresslab $version, $(date -u '+%Y-%m-%d %H:%M UTC'), in $(($(date +%s) - started)) s." \
       "Created in the database: $created. What is shown follows this role's privileges."
  echo
  cat "$work/advice.md" "$work/body.md"
} >"$work/report.md"
rm -f "$work/advice.md" "$work/body.md"
# mktemp made it private; the directory gets the permissions mkdir would have given it.
chmod "$(printf '%o' $((0777 & ~0$(umask))))" "$work"
mv -T "$work" "$out" || { echo "report: could not rename $work to $out" >&2; exit 3; }
trap - EXIT
echo "report: written to $out/report.md, $out/chart.svg and $out/columns.svg"
