class LatexNodes2Text:
    def latex_to_text(self, text):
        raise NotImplementedError("pylatexenc stand-in: import only")
