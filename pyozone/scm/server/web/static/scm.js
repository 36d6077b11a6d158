oz.start("Storage Container Manager", []);
