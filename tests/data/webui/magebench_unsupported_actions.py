"""An actions.py with a statement the translation refuses (a loop over find_elements, line 10)."""
import time

from selenium.webdriver.common.by import By


def toggle_all(driver):
    driver.find_element(By.CSS_SELECTOR, "button.switch").click()
    time.sleep(1)
    for box in driver.find_elements(By.CSS_SELECTOR, "input"):
        box.click()


actions = [toggle_all]
