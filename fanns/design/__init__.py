"""Design descriptions (`design.yaml`): what a DSE chose and the generators build, for both accelerators."""
