"""pyinterp.capture.partial"""
