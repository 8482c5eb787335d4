"""``python -m hudi_cdc.cli``."""

from hudi_cdc.cli import run

if __name__ == "__main__":
    run()
