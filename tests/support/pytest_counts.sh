# Sourced by tests/acp/run.sh and tests/mcp/run.sh: runs pytest from their venv in their
# test folder and counts the results from its JUnit report, so a crash or a run that
# collects nothing counts as a failure. Sets `status` (pytest's exit code), `passed` and
# `failed`.
#
# Usage: run_pytest VENV TEST_DIR [pytest args...]
run_pytest() {
  local venv=$1 dir=$2
  shift 2
  local report
  report=$(mktemp)
  # No __pycache__ left in the checkout.
  (cd "$dir" && PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider --junit-xml="$report" "$@")
  status=$?
  passed=0 failed=0
  if [ -s "$report" ]; then
    local tests failures errors skipped
    read -r tests failures errors skipped < <("$venv/bin/python" - "$report" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root if root.tag == "testsuite" else root.find("testsuite")
print(*(int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")))
PY
    )
    failed=$((failures + errors))
    passed=$((tests - failed - skipped))
  fi
  rm -f "$report"
  # No test collected is a failure too (pytest's exit 5).
  if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
}
