oz.start("Ozone Manager", []);
