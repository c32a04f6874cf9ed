"""pyinterp.capture.graphmend"""
