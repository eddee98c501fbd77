"""Graph statistics below the scores and the pools: MMD graph features and kernels, and the
single-thread BLAS guard they run under."""
