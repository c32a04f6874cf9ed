"""pyinterp.capture"""
