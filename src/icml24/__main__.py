import sys

from icml24.cli import main

sys.exit(main())
