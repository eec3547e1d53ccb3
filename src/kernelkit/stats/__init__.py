"""kernelkit.stats."""
