import sys

from ebm.cli import main

sys.exit(main())
