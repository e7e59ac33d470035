document.querySelectorAll('.switch').forEach((button) => {
  button.addEventListener('click', () => {
    const on = button.classList.toggle('on');
    document.getElementById(button.id + '-state').textContent = on ? 'On' : 'Off';
  });
});
