def register(subparsers, parent):  # placeholder, replaced by its owner
    pass
