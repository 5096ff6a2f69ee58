"""TBoxes used by the experiments and the script that derives the LUBM DL-Lite_core adaptation."""
