"""kernelkit.estimators."""
