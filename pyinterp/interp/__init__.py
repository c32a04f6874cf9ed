"""pyinterp.interp"""
