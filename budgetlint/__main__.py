"""``python -m budgetlint``."""

from budgetlint.cli import main

if __name__ == "__main__":
    main()
