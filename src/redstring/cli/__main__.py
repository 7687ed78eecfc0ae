"""`python -m redstring.cli`: the same as the `redstring` command."""

import sys

from redstring.cli import main

if __name__ == "__main__":
    sys.exit(main())
