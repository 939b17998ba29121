#!/bin/sh
# bbcap_tokens_live.sh - bbcap_tokens.sh on a capture made now by the real
# servers (tests/fixtures/tokens/make_tokens.sh), with bbcap live beside it.
exec sh "$BB_SRC/tests/cli/bbcap_tokens.sh" live
