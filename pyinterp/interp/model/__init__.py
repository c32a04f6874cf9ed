"""pyinterp.interp.model"""
