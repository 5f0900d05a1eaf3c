"""Exit codes of every kernelvet command (README, "Exit codes")."""

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_INTERNAL, EXIT_UNVERIFIED = 0, 1, 2, 3, 4, 5
# Contract findings only (zero-config: real only for calls that break what the op does not check).
EXIT_CONTRACT = 6
