"""Device memory images: what the generators and simulators load into the accelerators' memories."""
