"""The Reading Lamp task's interactions, in MageBench's format (written for framebus's tests; never run)."""
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys


def switch_on(driver):
    driver.find_element(By.CSS_SELECTOR, "button.switch").click()
    time.sleep(0.5)
    ActionChains(driver).move_to_element(driver.find_element(By.ID, "lamp")).perform()


def sign_guestbook(driver):
    """Sign with a name, then rest the pointer on the note."""
    field = driver.find_element(By.NAME, "guest")
    field.click()
    field.send_keys("Ann")
    field.send_keys(Keys.ENTER)
    note = driver.find_element(By.CLASS_NAME, "note")
    chain = ActionChains(driver)
    chain.move_to_element(note).perform()
    time.sleep(1)


actions = [switch_on, sign_guestbook]


def interact(driver, dir):
    driver.save_screenshot(f"{dir}/_images/origin.png")
    switch_on(driver)
    driver.save_screenshot(f"{dir}/_images/after_switch_on.png")
    sign_guestbook(driver)
    driver.save_screenshot(f"{dir}/_images/after_sign_guestbook.png")
