"""The source transformation: normalize → SSA → activity → reverse → codegen."""
