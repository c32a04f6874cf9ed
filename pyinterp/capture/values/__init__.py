"""pyinterp.capture.values"""
