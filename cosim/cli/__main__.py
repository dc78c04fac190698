import sys

from cosim.cli import main

sys.exit(main())
