"""``python -m reliab`` runs the command-line interface."""

from reliab.cli import main

if __name__ == "__main__":
    main()
