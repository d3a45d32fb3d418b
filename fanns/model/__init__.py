"""Resource and performance models, design-space exploration, Pareto sets."""
