#!/bin/bash
# Parse every .rst file that the series changes with docutils (the parser
# under Sphinx/htmldocs): any warning or error fails.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
need python3 git

cd "$KTREE" || exit
files=$(git diff --name-only base series -- '*.rst')
[ -n "$files" ] || { echo "PASS docs (no .rst changed)"; exit 0; }
for f in $files; do
	out=$(python3 -c 'import sys, docutils.core
docutils.core.publish_doctree(open(sys.argv[1]).read(), source_path=sys.argv[1],
	settings_overrides={"report_level": 2, "halt_level": 5})' "$f" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL docs/$f: $(echo "$out" | head -n 3 | tr '\n' ' ')"
	else
		echo "PASS docs/$f parses without warnings"
	fi
done
